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
    // Why a phase cannot exist on a transport, whatever the configuration.
    const char* InherentReason(Transport transport, Phase phase)
    {
      if (phase == Phase::Receive && transport == Transport::Job)
      {
        return "a job stores from a buffer it already holds: there is nothing to receive";
      }
      if (phase == Phase::Receive && transport == Transport::Dicom)
      {
        return "DCMTK reads the whole C-STORE dataset before the first plugin hook fires; the network "
               "receive of a dataset is inside 'associationGap' (together with client idle time)";
      }
      if (phase == Phase::ResponseSend && transport != Transport::Rest)
      {
        return "only an HTTP ingest request has an answer of its own to send";
      }
      if (phase == Phase::AssociationGap && transport != Transport::Dicom)
      {
        return "only a C-STORE association carries a sequence of instances from one peer";
      }
      return nullptr;
    }

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
    const char* reason = (transport != nullptr) ? InherentReason(*transport, phase) : nullptr;
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
