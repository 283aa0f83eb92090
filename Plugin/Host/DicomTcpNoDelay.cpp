#include "Host/DicomTcpNoDelay.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace IngestPerf
{
  namespace
  {
    const char* const kVariable = "TCP_NODELAY";
    const char* const kEnvironmentSource = "environment";
    const char* const kStall = "each C-STORE answer can wait about 40 ms for the peer's delayed ACK";
    const char* const kRemedy = "start Orthanc with TCP_NODELAY=1 in its environment (systemd: "
                                "Environment=TCP_NODELAY=1 in a drop-in; docker: -e TCP_NODELAY=1)";

    std::string Quoted(const char* value)
    {
      // The operator's text, shortened: a detail, not a dump of the environment.
      std::string text(value, strnlen(value, 64));
      return "\"" + text + (value[text.size()] != '\0' ? "...\"" : "\"");
    }
  }


  bool DcmtkDisablesNagle(const char* value)
  {
    if (value == nullptr)
    {
      return false;  // Debian builds DCMTK without DISABLE_NAGLE_ALGORITHM: Nagle stays on by default
    }
    // The very call DCMTK makes, so that every odd value (" 1", "1x", "0x1", "", "4294967296")
    // reads here as it reads there; when nothing parses, DCMTK keeps its default.
    int number = 0;
    return std::sscanf(value, "%d", &number) == 1 && number != 0;
  }


  DicomTcpNoDelayStatus DescribeDicomTcpNoDelay(const char* environmentValue)
  {
    DicomTcpNoDelayStatus status;
    if (environmentValue == nullptr)
    {
      status.detail = std::string("TCP_NODELAY is not in Orthanc's environment: DCMTK keeps Nagle's algorithm, and ") +
                      kStall + "; to remove Orthanc's side of it, " + kRemedy;
      return status;
    }
    const std::string variable = std::string(kVariable) + "=" + Quoted(environmentValue);
    status.inEffect = DcmtkDisablesNagle(environmentValue);
    if (status.inEffect)
    {
      status.source = kEnvironmentSource;
      status.detail = variable + " is in Orthanc's environment: DCMTK disables Nagle's algorithm on every DICOM "
                                 "association Orthanc accepts or opens";
    }
    else
    {
      status.detail = variable +
                      " is in Orthanc's environment, which DCMTK reads as keeping Nagle's algorithm (it disables "
                      "it for a non-zero integer only): " +
                      kStall + "; to remove Orthanc's side of it, " + kRemedy;
    }
    return status;
  }


  DicomTcpNoDelayStatus ReadDicomTcpNoDelay()
  {
    // Once, from OrthancPluginInitialize: DCMTK reads the same variable for each association later,
    // and nothing in a well-behaved process changes it meanwhile.
    return DescribeDicomTcpNoDelay(getenv(kVariable));
  }
}
