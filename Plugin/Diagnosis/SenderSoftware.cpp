#include "Diagnosis/SenderSoftware.h"

namespace IngestPerf
{
  namespace
  {
    struct KnownDefault
    {
      const char* aet;
      SenderSoftware software;
    };

    // The calling AETs these tools use unless told otherwise.
    constexpr KnownDefault kDefaults[] = {{"STORESCU", SenderSoftware::Dcmtk},
                                          {"DCMSEND", SenderSoftware::Dcmtk},
                                          {"ORTHANC", SenderSoftware::Orthanc},
                                          {"GDCMSCU", SenderSoftware::Gdcm},
                                          {"PYNETDICOM", SenderSoftware::Pynetdicom}};
  }


  SenderSoftware SenderSoftwareOfCallingAet(const std::string& aet)
  {
    size_t length = aet.size();
    while (length > 0 && aet[length - 1] == ' ')
    {
      length--;
    }
    for (const KnownDefault& known : kDefaults)
    {
      if (aet.compare(0, length, known.aet) == 0 && known.aet[length] == '\0')
      {
        return known.software;
      }
    }
    return SenderSoftware::Unknown;
  }


  const char* SenderSoftwareName(SenderSoftware software)
  {
    switch (software)
    {
      case SenderSoftware::Dcmtk:
        return "DCMTK";
      case SenderSoftware::Orthanc:
        return "Orthanc";
      case SenderSoftware::Gdcm:
        return "GDCM";
      case SenderSoftware::Pynetdicom:
        return "pynetdicom";
      default:
        return "unknown";
    }
  }


  const char* SenderNoDelayAdvice(SenderSoftware software)
  {
    switch (software)
    {
      case SenderSoftware::Dcmtk:
        return "DCMTK (storescu, dcmsend): start it with TCP_NODELAY=1 in its environment; DCMTK reads the variable "
               "for every association it opens, and Debian's build keeps Nagle's algorithm otherwise";
      case SenderSoftware::Orthanc:
        return "an Orthanc sending (/modalities/{id}/store, C-MOVE, its jobs): start it with TCP_NODELAY=1 in its "
               "environment (systemd: Environment=TCP_NODELAY=1 in a drop-in; docker: -e TCP_NODELAY=1), which "
               "its DCMTK reads for the associations it opens as well (Orthanc's own TcpNoDelay is its HTTP "
               "server's; 1.10.1 to 1.13.0 have no DICOM option)";
      case SenderSoftware::Gdcm:
        return "GDCM's gdcmscu (3.0.21) has no option for TCP_NODELAY: send with a tool that has one (DCMTK's "
               "storescu with TCP_NODELAY=1), or over several associations at once so that the stalls overlap";
      case SenderSoftware::Pynetdicom:
        return "pynetdicom (2.1) has no option for TCP_NODELAY: the application can set it on the association's "
               "socket once associated (socket.TCP_NODELAY on assoc.dul.socket.socket)";
      default:
        return "the sender's TCP_NODELAY option, if it has one (a DCMTK-based sender, an Orthanc among them: "
               "TCP_NODELAY=1 in its environment)";
    }
  }
}
