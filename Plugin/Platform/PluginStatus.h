// What the plugin knows about itself and its host, fixed at start-up: versions, configuration,
// and which hooks Orthanc accepted. Exported with every /perf/stats answer.
#pragma once

#include "Platform/Configuration.h"

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
    bool heldByAnotherPlugin = false;  // another plugin owns Orthanc's storage area
    std::string reason;                // why not active, when requested
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

  // What the plugin does, first in every answer: times ingest, was told not to (IngestPerf.Enable
  // false), or could not start (a wrong option, memory it could not reserve...) and stays loaded,
  // registering no hook, so that Orthanc runs on and /perf says why.
  enum class PluginState
  {
    Running,
    Disabled,
    Inert
  };

  inline const char* PluginStateName(PluginState state)
  {
    switch (state)
    {
      case PluginState::Disabled:
        return "disabled";
      case PluginState::Inert:
        return "inert";
      default:
        return "running";
    }
  }

  struct PluginStatus
  {
    std::string pluginVersion;
    std::string orthancVersion;
    int64_t startWallNs = 0;
    Configuration configuration;
    PluginState state = PluginState::Running;
    std::string stateReason;  // why it is disabled or inert; "" when running
    bool Running() const { return state == PluginState::Running; }
    HookRegistrations hooks;
    StorageAreaState storage;
    RestAnswerState restAnswers;
    DicomTcpNoDelayStatus dicomTcpNoDelay;
  };
}
