// What the diagnosis can know of a C-STORE sender's software, to say how to switch off Nagle's
// algorithm on its side: only its calling AET, when that is the default of a known tool. The
// implementation class UID and version name a sender announces travel in its association request,
// which Orthanc shows no plugin; the meta header of an instance received by C-STORE is written by the
// receiving Orthanc's DCMTK ("OFFIS_DCMTK_367" on 1.10.1 whether storescu or gdcmscu sent it). Only
// a name of this fixed list leaves the plugin; the calling AET itself follows IngestPerf.HashPeers.
#pragma once

#include <cstddef>
#include <string>

namespace IngestPerf
{
  enum class SenderSoftware
  {
    Unknown,
    Dcmtk,       // storescu, dcmsend (pynetdicom's storescu application defaults to STORESCU too)
    Orthanc,     // its DicomAet, "ORTHANC" by default: /modalities/{id}/store, C-MOVE, peers' jobs
    Gdcm,        // gdcmscu
    Pynetdicom,  // an application on pynetdicom's AE with its default title
    Count
  };

  constexpr size_t kSenderSoftwareCount = static_cast<size_t>(SenderSoftware::Count);

  // The software whose default calling AET `aet` is (trailing spaces ignored); Unknown otherwise.
  SenderSoftware SenderSoftwareOfCallingAet(const std::string& aet);

  // "DCMTK", "Orthanc", "GDCM", "pynetdicom", or "unknown".
  const char* SenderSoftwareName(SenderSoftware software);

  // How to send without Nagle's algorithm from that software, as checked in its sources or by the
  // scenarios (docs/diagnosis.md#sender-stall); for Unknown, the sender's option if it has one.
  const char* SenderNoDelayAdvice(SenderSoftware software);
}
