#include "Recording/Unobservable.h"

#include "Platform/HttpConnectionIdentity.h"
#include "Platform/ThreadClocks.h"

#include <cstring>

namespace IngestPerf
{
  const char* const kRestAnswerUnobservable =
    "Orthanc compresses and sends the REST answer in HttpOutput::Answer, after every plugin hook, and no "
    "Orthanc up to 1.13.0 offers a hook around it; taking over POST /instances to time it would change the "
    "instances' Origin, RemoteIP and HttpUsername and Orthanc's error details";


  namespace
  {
    // What the plugin could not set up for this phase, or nullptr.
    const char* MissingHookReason(const PluginStatus& status, Phase phase)
    {
      switch (DefinitionOf(phase).need)
      {
        case PhaseNeed::TimedStorage:
          return status.storage.active
                   ? nullptr
                   : "needs the timed storage area (IngestPerf.TimedStorage, see storage.reason): Orthanc has no "
                     "hook between its storage write and its index transaction";
        case PhaseNeed::TranscoderHook:
          return status.hooks.transcoder.registered
                   ? nullptr
                   : "needs the transcoder callback, registered only when IngestTranscoding is configured and "
                     "IngestPerf.TranscodeTiming is not Off (see hooks.transcoder)";
        case PhaseNeed::HttpConnection:
          if (!status.hooks.httpRequestFilter.registered)
          {
            return "needs the HTTP request filter, which Orthanc did not register (see hooks.httpRequestFilter)";
          }
          return HttpConnectionIdentity::UnknownReason();
        case PhaseNeed::ReceivedInstanceHook:
          return status.hooks.receivedInstance.Get() == ReceivedInstanceHook::State::Held
                   ? nullptr
                   : "needs the ReceivedInstanceCallback, which this plugin does not hold (see "
                     "hooks.receivedInstance): its work is in receive (HTTP) or associationGap (C-STORE)";
        case PhaseNeed::LaterPlugins:
          switch (phase == Phase::OtherFilters ? status.laterPlugins.Filter() : status.laterPlugins.Stored())
          {
            case LaterPluginsHooks::State::None:
              return status.laterPlugins.loadedBefore.empty()
                       ? "no other plugin is loaded: nothing runs between this plugin's callback and the end of "
                         "Orthanc's chain"
                       : "no plugin is loaded after this one: the callbacks of the plugins loaded before it (see "
                         "hooks.otherPlugins) run before this plugin's, inside preStore or receive and persist; list "
                         "this plugin first in \"Plugins\" to time them apart";
            case LaterPluginsHooks::State::Waiting:
              return "this plugin's second callback, last in Orthanc's chain, is registered at the first instance";
            case LaterPluginsHooks::State::Refused:
              return "Orthanc refused the registration of this plugin's second callback (see hooks.otherPlugins)";
            default:
              return nullptr;
          }
        default:
          return nullptr;
      }
    }
  }


  const char* PhaseUnobservableReason(const PluginStatus& status, const Transport* transport, Phase phase)
  {
    const char* reason = (transport != nullptr) ? PhaseAbsenceReason(phase, *transport) : nullptr;
    return reason != nullptr ? reason : MissingHookReason(status, phase);
  }


  const char* PhasePartsUnobservableReason(const PluginStatus& status, Phase phase)
  {
    const char* reason = PhasePartsAbsenceReason(phase);
    if (reason == nullptr && status.configuration.phasePartsSampling == 0)
    {
      reason = "IngestPerf.PhasePartsSampling is 0: no phase is split into its time on a CPU, waiting for a CPU "
               "and blocked";
    }
    return reason;
  }


  const char* RunDelayUnobservableReason()
  {
    return RunDelayUnavailableReason();
  }


  std::vector<UnobservableStep> UnobservableSteps(const PluginStatus& status)
  {
    std::vector<UnobservableStep> steps = {
      {"responseCompressionAndSend", "rest", kRestAnswerUnobservable},
      {"cstoreResponseSend", "dicom",
       "the C-STORE-RSP is sent after OnStored returns, with no hook; its wait (Nagle and delayed ACK "
       "without TCP_NODELAY) is inside associationGap"},
      {"associationSetup", "dicom",
       "associations are negotiated before any plugin hook; the first instance of an association has no "
       "associationGap"},
    };
    if (!status.storage.active)
    {
      steps.push_back({"storageWriteVsIndexUpdate", "all",
                       "persist covers the storage write and the index transaction: no hook separates them "
                       "unless the plugin owns the storage area"});
    }
    return steps;
  }
}
