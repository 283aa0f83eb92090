#include "IngestRecorder.h"

#include "DuplicateDetection.h"

namespace IngestPerf
{
  IngestRecorder::IngestRecorder(IngestStats& stats, ChangeCorrelator& correlator, AssociationTracker& associations,
                                 bool overwriteInstances) :
    stats_(stats),
    correlator_(correlator),
    associations_(associations),
    overwriteInstances_(overwriteInstances)
  {
  }


  void IngestRecorder::InstanceCompleted(const CompletedInstance& instance)
  {
    // Every C-STORE instance, duplicate or not, ends a gap and starts the next one.
    const int64_t associationGap =
      (instance.transport == Transport::Dicom && instance.peerKey != 0)
        ? associations_.InstanceStored(instance.peerKey, instance.receivedNs, instance.storedNs)
        : -1;
    if (!overwriteInstances_)
    {
      DuplicateEvidence evidence{instance.receptionSecond, instance.startWallNs, false, 0};
      int64_t changeNs = 0;
      if (correlator_.EarlierChange(instance.instanceKey, instance.segmentStartNs, changeNs))
      {
        evidence.hasEarlierChange = true;
        evidence.earlierChangeWallNs = instance.startWallNs - (instance.segmentStartNs - changeNs);
      }
      if (IsAlreadyStored(evidence))
      {
        stats_.RecordAlreadyStored(instance.transport);
        return;
      }
    }
    stats_.RecordStored(instance, associationGap);
    RecordPairing(correlator_.Stored(instance.instanceKey, instance.storedNs, instance.transport));
  }


  void IngestRecorder::InstanceAbandoned(Transport transport, Outcome outcome)
  {
    stats_.RecordOutcome(transport, outcome);
  }


  void IngestRecorder::NewInstanceChange(uint64_t instanceKey, int64_t nowNs)
  {
    RecordPairing(correlator_.NewInstanceChange(instanceKey, nowNs));
  }


  void IngestRecorder::InstanceDeleted(uint64_t instanceKey)
  {
    correlator_.InstanceDeleted(instanceKey);
  }


  void IngestRecorder::RecordPairing(const ChangeCorrelator::Pairing& pairing)
  {
    if (!pairing.paired)
    {
      return;
    }
    if (pairing.lagNs >= 0)
    {
      stats_.RecordChangeDispatch(pairing.transport, pairing.lagNs);
    }
    else
    {
      stats_.RecordChangeBeforeStored(pairing.transport);
    }
  }
}
