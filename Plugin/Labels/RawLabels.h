// The label values of one instance as Orthanc lends them during a callback, before interning.
#pragma once

#include <cstddef>

namespace IngestPerf
{
  constexpr size_t kMaxUidLength = 64;  // the longest DICOM UID

  // Borrowed C strings, valid during the callback; nullptr or "" for "(none)".
  struct RawLabels
  {
    const char* remoteAet = nullptr;
    const char* remoteIp = nullptr;
    const char* calledAet = nullptr;
    const char* receivedSyntax = nullptr;
    const char* storedSyntax = nullptr;
    const char* sopClass = nullptr;
  };
}
