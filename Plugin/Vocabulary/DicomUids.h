// The UIDs that the DICOM standard defines for the labels receivedSyntax, storedSyntax and
// sopClass, each table sorted (strcmp order) for a binary search. Generated (DicomUids.cpp).
#pragma once

#include <cstddef>

namespace IngestPerf
{
  extern const char* const kTransferSyntaxUids[];
  extern const size_t kTransferSyntaxUidsCount;
  extern const char* const kSopClassUids[];
  extern const size_t kSopClassUidsCount;
}
