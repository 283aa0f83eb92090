// Reads the Media Storage SOP Class UID (0002,0002), SOP Instance UID (0002,0003) and the Transfer
// Syntax UID (0002,0010) from the Part 10 meta header of a raw DICOM buffer, without allocating:
// the meta header is always explicit VR little endian, so a short scan of group 0002 finds them.
// Used in ReceivedInstanceCallback, where Orthanc has not parsed anything yet, so that OnStored
// needs no SDK call for the two labels, and so that a record that ends there (Orthanc 1.13 answers
// a duplicate before any filter) can be looked up later by the plugin's thread.
#pragma once

#include "Labels/RawLabels.h"

#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  struct MetaHeader
  {
    char sopClass[kMaxUidLength + 1];        // "" when absent
    char sopInstance[kMaxUidLength + 1];     // "" when absent; never shown (Orthanc 1.13's duplicates)
    char transferSyntax[kMaxUidLength + 1];  // "" when absent
  };

  // True when the transfer syntax was found; fills what it finds, "" for the rest.
  bool ReadMetaHeader(MetaHeader& header, const void* buffer, uint64_t size);
}
