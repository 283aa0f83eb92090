#include "Recording/Unobservable.h"

#include <cstring>

namespace IngestPerf
{
  const char* const kRestAnswerUnobservable =
    "Orthanc compresses and sends the REST answer in HttpOutput::Answer, after every plugin hook, and no "
    "Orthanc up to 1.12.7 offers a hook around it; taking over POST /instances to time it would change the "
    "instances' Origin, RemoteIP and HttpUsername and Orthanc's error details";


  namespace
  {
    // What the plugin could not set up for this phase, or nullptr.
    const char* MissingHookReason(const PluginStatus& status, Phase phase)
    {
      if (phase == Phase::ResponseSend && !status.restAnswers.active)
      {
        return status.restAnswers.reason.c_str();
      }
      if ((phase == Phase::StoragePrepare || phase == Phase::StorageWrite || phase == Phase::IndexUpdate) &&
          !status.storage.active)
      {
        return "needs the timed storage area (IngestPerf.TimedStorage, see storage.reason): Orthanc has no hook "
               "between its storage write and its index transaction";
      }
      if (phase == Phase::Transcode && !status.hooks.transcoder.registered)
      {
        return "needs the transcoder callback, registered only when IngestTranscoding is configured and "
               "IngestPerf.TranscodeTiming is not Off (see hooks.transcoder)";
      }
      if (!status.hooks.receivedInstance.registered &&
          (phase == Phase::Receive || phase == Phase::PreStore || phase == Phase::AssociationGap))
      {
        return "needs the ReceivedInstanceCallback, which this plugin does not hold (see hooks.receivedInstance)";
      }
      return nullptr;
    }
  }


  const char* PhaseUnobservableReason(const PluginStatus& status, const Transport* transport, Phase phase)
  {
    const char* reason = (transport != nullptr) ? PhaseAbsenceReason(phase, *transport) : nullptr;
    return reason != nullptr ? reason : MissingHookReason(status, phase);
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
