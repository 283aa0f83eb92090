// Reads the Transfer Syntax UID (0002,0010) from the Part 10 meta header of a raw DICOM buffer,
// without allocating: the meta header is always explicit VR little endian, so a short scan of
// group 0002 finds it. Used in ReceivedInstanceCallback, where Orthanc has not parsed anything yet.
#pragma once

#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  constexpr size_t kMaxUidLength = 64;

  // On success writes the UID (NUL-terminated, trailing padding removed) into `uid`, which must
  // hold kMaxUidLength + 1 characters.
  bool ReadTransferSyntax(char* uid, const void* buffer, uint64_t size);
}
