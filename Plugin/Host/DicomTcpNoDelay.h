// Whether Orthanc answers C-STOREs without the Nagle stall: Orthanc's DICOM worker writes the
// 12-byte PDV header of each C-STORE-RSP and the rest in two write() calls; with Nagle's algorithm
// on, the second waits for the peer's delayed ACK, about 40 ms per instance.
//
// DCMTK (3.6.7 under Orthanc 1.10.1, 3.6.9 under 1.12.7) has no global switch for it: it calls
// getenv("TCP_NODELAY") for every association, right after accept() in dul.cc
// (receiveTransportConnectionTCP, the associations Orthanc receives) and right after connect() in
// dulfsm.cc (requestAssociationTCP, the ones Orthanc opens: C-STORE to a modality, C-MOVE, echo),
// and sets TCP_NODELAY on the socket when the value reads as a non-zero integer (sscanf "%d").
// The environment is the process's, so the remedy is the operator's (TCP_NODELAY=1 where Orthanc
// starts); a guest only reads it, once, and reports what DCMTK will do.
#pragma once

#include "Platform/PluginStatus.h"

namespace IngestPerf
{
  // DCMTK's reading of the variable's value (nullptr: not set): true when it disables Nagle.
  bool DcmtkDisablesNagle(const char* value);

  // What DCMTK does given TCP_NODELAY in Orthanc's environment (nullptr: not set), and why.
  DicomTcpNoDelayStatus DescribeDicomTcpNoDelay(const char* environmentValue);

  // The same for Orthanc's environment as it is now: read, never written.
  DicomTcpNoDelayStatus ReadDicomTcpNoDelay();
}
