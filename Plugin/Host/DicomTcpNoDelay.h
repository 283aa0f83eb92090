// IngestPerf.DicomTcpNoDelay: the remedy for the C-STORE answer stall. Orthanc's DICOM worker
// writes the 12-byte PDV header of each C-STORE-RSP and the rest in two write() calls; with Nagle's
// algorithm on, the second waits for the peer's delayed ACK, about 40 ms per instance.
//
// DCMTK (3.6.7 under Orthanc 1.10.1, 3.6.9 under 1.12.7) has no global switch for it: it calls
// getenv("TCP_NODELAY") for every association, right after accept() in dul.cc
// (receiveTransportConnectionTCP, the associations Orthanc receives) and right after connect() in
// dulfsm.cc (requestAssociationTCP, the ones Orthanc opens: C-STORE to a modality, C-MOVE, echo),
// and sets TCP_NODELAY on the socket when the value reads as a non-zero integer (sscanf "%d").
// So the plugin puts TCP_NODELAY=1 into Orthanc's environment at initialisation, unless the
// operator's environment already has the variable, which is then left as it is and reported.
#pragma once

#include "Platform/Configuration.h"
#include "Platform/PluginStatus.h"

namespace IngestPerf
{
  // DCMTK's reading of the variable's value (nullptr: not set): true when it disables Nagle.
  bool DcmtkDisablesNagle(const char* value);

  // What the plugin does and reports, given TCP_NODELAY in Orthanc's environment (nullptr: not set).
  // Sets nothing: with source "IngestPerf.DicomTcpNoDelay", ApplyDicomTcpNoDelay sets the variable.
  DicomTcpNoDelayStatus DecideDicomTcpNoDelay(const Configuration& configuration, const char* environmentValue);

  // At OrthancPluginInitialize, before Orthanc starts its DICOM server.
  DicomTcpNoDelayStatus ApplyDicomTcpNoDelay(const Configuration& configuration);

  // At OrthancPluginFinalize: removes the variable if the plugin set it, so that a reload of the
  // plugins (POST /tools/reset) reads the operator's environment, not the plugin's, again.
  void RestoreDicomTcpNoDelay();
}
