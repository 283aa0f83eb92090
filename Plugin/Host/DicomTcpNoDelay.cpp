#include "Host/DicomTcpNoDelay.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace IngestPerf
{
  namespace
  {
    const char* const kVariable = "TCP_NODELAY";
    const char* const kOptionSource = "IngestPerf.DicomTcpNoDelay";
    const char* const kEnvironmentSource = "environment";
    const char* const kStall = "each C-STORE answer can wait about 40 ms for the peer's delayed ACK";

    // Whether this library put the variable there (Restore removes only its own).
    bool setByPlugin = false;

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


  DicomTcpNoDelayStatus DecideDicomTcpNoDelay(const Configuration& configuration, const char* environmentValue)
  {
    DicomTcpNoDelayStatus status;
    status.configured = configuration.dicomTcpNoDelay;
    const bool applies = configuration.enable && configuration.dicomTcpNoDelay;
    if (environmentValue != nullptr)
    {
      const std::string variable = std::string(kVariable) + "=" + Quoted(environmentValue);
      status.inEffect = DcmtkDisablesNagle(environmentValue);
      if (status.inEffect)
      {
        status.source = kEnvironmentSource;
        status.detail = variable + " was in Orthanc's environment before the plugin started: DCMTK disables Nagle's "
                                   "algorithm on every DICOM association Orthanc accepts or opens";
      }
      else
      {
        status.detail = variable +
                        " is in Orthanc's environment, which DCMTK reads as keeping Nagle's algorithm (it "
                        "disables it for a non-zero integer only): " +
                        kStall;
      }
      if (applies)
      {
        status.detail += status.inEffect ? "; IngestPerf.DicomTcpNoDelay had nothing to change"
                                         : "; IngestPerf.DicomTcpNoDelay leaves the operator's setting as it is";
      }
      return status;
    }
    if (applies)
    {
      status.inEffect = true;
      status.source = kOptionSource;
      status.detail = "IngestPerf.DicomTcpNoDelay set TCP_NODELAY=1 in Orthanc's environment before Orthanc started "
                      "its DICOM server: DCMTK disables Nagle's algorithm on every DICOM association Orthanc accepts "
                      "or opens";
      return status;
    }
    const char* why = configuration.dicomTcpNoDelay
                        ? "IngestPerf.Enable is false, so the plugin changes nothing, and TCP_NODELAY is not in "
                          "Orthanc's environment"
                        : "TCP_NODELAY is not in Orthanc's environment and IngestPerf.DicomTcpNoDelay is false";
    status.detail = std::string(why) + ": DCMTK keeps Nagle's algorithm, and " + kStall;
    return status;
  }


  DicomTcpNoDelayStatus ApplyDicomTcpNoDelay(const Configuration& configuration)
  {
    // setenv is not safe against a getenv running on another thread (glibc may reallocate the
    // environment array under it). Here it runs once, from OrthancPluginInitialize, which Orthanc
    // calls on its main thread while loading the plugins, before it opens the database and starts
    // its job engine, HTTP and DICOM servers: Orthanc has no other thread yet (strace of 1.10.1 and
    // 1.12.7: their first thread is created after this), and DCMTK reads the variable only when an
    // association is accepted or opened, later. Only a thread started by a plugin loaded before this
    // one could race it.
    DicomTcpNoDelayStatus status = DecideDicomTcpNoDelay(configuration, getenv(kVariable));
    if (status.source == kOptionSource)
    {
      if (setenv(kVariable, "1", 0) == 0)
      {
        setByPlugin = true;
      }
      else
      {
        status.inEffect = false;
        status.source.clear();
        status.detail = std::string("IngestPerf.DicomTcpNoDelay could not set TCP_NODELAY=1 in Orthanc's "
                                    "environment (") +
                        strerror(errno) + "): DCMTK keeps Nagle's algorithm, and " + kStall;
      }
    }
    return status;
  }


  void RestoreDicomTcpNoDelay()
  {
    // Orthanc finalizes the plugins once its servers and jobs have stopped: no association reads
    // the variable any more, and the main thread is the one calling.
    const char* value = getenv(kVariable);
    if (setByPlugin && value != nullptr && std::strcmp(value, "1") == 0)
    {
      unsetenv(kVariable);
    }
    setByPlugin = false;
  }
}
