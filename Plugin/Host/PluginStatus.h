// What the plugin knows about itself and its host, fixed at start-up: versions, configuration,
// and which hooks Orthanc accepted. Exported with every /perf/stats answer.
#pragma once

#include "Host/Configuration.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace IngestPerf
{
  struct HookState
  {
    bool registered = false;
    std::string reason;  // why not, when not registered
  };

  struct HookRegistrations
  {
    HookState httpRequestFilter;
    HookState receivedInstance;
    HookState transcoder;
    HookState instanceFilter;
    HookState cstoreFilter;
    HookState storedInstance;
    HookState change;
  };

  struct StorageAreaState
  {
    bool requested = false;
    bool active = false;
    std::string reason;  // why not active, when requested
    std::string root;
  };

  struct RestAnswerState
  {
    bool active = false;
    std::string reason;
  };

  // Whether DCMTK disables Nagle's algorithm on Orthanc's DICOM associations (TCP_NODELAY), and
  // who decided it (Host/DicomTcpNoDelay.h).
  struct DicomTcpNoDelayStatus
  {
    bool configured = false;  // IngestPerf.DicomTcpNoDelay
    bool inEffect = false;    // DCMTK will set TCP_NODELAY on the associations Orthanc accepts and opens
    std::string source;       // "IngestPerf.DicomTcpNoDelay", "environment", or "" when not in effect
    std::string detail;
  };

  struct PluginStatus
  {
    std::string pluginVersion;
    std::string orthancVersion;
    int64_t startWallNs = 0;
    Configuration configuration;
    // Set when the plugin could not start (its memory could not be reserved, say): Orthanc then
    // runs without it, and /perf/stats says why.
    std::string notStartedReason;
    HookRegistrations hooks;
    StorageAreaState storage;
    RestAnswerState restAnswers;
    DicomTcpNoDelayStatus dicomTcpNoDelay;
  };
}
