#include "Recording/IngestRecorder.h"

#include "Recording/DuplicateDetection.h"
#include "Timeline/ThreadTimelines.h"

#include <cstring>

namespace IngestPerf
{
  InstanceRecord ToRecord(const CompletedInstance& instance, int64_t associationGapNs)
  {
    InstanceRecord record;
    record.storedBytes = instance.storedBytes;
    record.storedNs = instance.storedNs;
    record.startNs = instance.segmentStartNs;
    record.hasTimeline = instance.hasTimeline;
    if (!instance.hasTimeline)
    {
      return record;  // nothing but the size and the outcome: no phase has a start
    }
    record.transcodeAttempted = instance.transcodeAttempted;
    if (instance.receivedNs != 0)
    {
      record.receivedBytes = static_cast<int64_t>(instance.receivedBytes);
      if (instance.hasReceivePhase)
      {
        record.Set(Phase::Receive, instance.segmentStartNs, instance.receivedNs - instance.segmentStartNs);
      }
      if (instance.filteredNs != 0)
      {
        record.Set(Phase::PreStore, instance.receivedNs, instance.filteredNs - instance.receivedNs);
      }
    }
    if (instance.transcodeStartNs != 0)
    {
      // A transcode done by Orthanc after our callback ends, at the latest, at the filter.
      const int64_t end = instance.transcodeEndNs != 0 ? instance.transcodeEndNs : instance.filteredNs;
      if (end >= instance.transcodeStartNs)
      {
        record.Set(Phase::Transcode, instance.transcodeStartNs, end - instance.transcodeStartNs);
      }
    }
    if (instance.filteredNs != 0)
    {
      record.Set(Phase::Persist, instance.filteredNs, instance.storedNs - instance.filteredNs);
      if (instance.firstCreateStartNs != 0)
      {
        record.Set(Phase::StoragePrepare, instance.filteredNs, instance.firstCreateStartNs - instance.filteredNs);
        record.Set(Phase::StorageWrite, instance.firstCreateStartNs, instance.createTotalNs);
        record.Set(Phase::IndexUpdate, instance.lastCreateEndNs, instance.storedNs - instance.lastCreateEndNs);
      }
    }
    record.Set(Phase::ServerTotal, instance.segmentStartNs, instance.storedNs - instance.segmentStartNs);
    if (associationGapNs >= 0)
    {
      // The gap ends at ReceivedInstance (AssociationTracker::InstanceStored).
      record.Set(Phase::AssociationGap, instance.receivedNs - associationGapNs, associationGapNs);
    }
    return record;
  }


  IngestRecorder::IngestRecorder(IngestStats& stats, LabelCatalog& labels, ChangeCorrelator& correlator,
                                 AssociationTracker& associations, ChangeQueueStats& changes, RecentInstances& recent,
                                 bool overwriteInstances) :
    stats_(stats),
    labels_(labels),
    correlator_(correlator),
    associations_(associations),
    changes_(changes),
    recent_(recent),
    overwriteInstances_(overwriteInstances)
  {
  }


  void IngestRecorder::InstanceCompleted(const CompletedInstance& instance)
  {
    const InstanceLabels labels = labels_.Intern(instance.transport, instance.labels, instance.storedBytes);
    // Every C-STORE instance, duplicate or not, ends a gap and starts the next one.
    const int64_t associationGap =
      (instance.transport == Transport::Dicom && instance.peerKey != 0)
        ? associations_.InstanceStored(instance.peerKey, labels.Get(LabelDimension::RemoteAet), instance.receivedNs,
                                       instance.storedNs, labels.Get(LabelDimension::RemoteIp))
        : -1;

    if (instance.httpAnswerEncoding != 0)
    {
      stats_.Count(instance.httpAnswerEncoding == 1 ? Counter::AnswersAcceptingCompression
                                                    : Counter::AnswersWithoutCompression,
                   labels, instance.storedNs);
    }
    if (instance.removedAfterCreate)
    {
      // Timed storage saw Orthanc remove the file it had just written: the index refused it.
      stats_.RecordOutcome(Outcome::AlreadyStored, labels, instance.storedNs);
      Remember(instance, ToRecord(instance, associationGap), labels, Outcome::AlreadyStored);
      return;
    }
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
        stats_.RecordOutcome(Outcome::AlreadyStored, labels, instance.storedNs);
        Remember(instance, ToRecord(instance, associationGap), labels, Outcome::AlreadyStored);
        return;
      }
    }
    const InstanceRecord record = ToRecord(instance, associationGap);
    stats_.RecordStored(record, labels);
    Remember(instance, record, labels, Outcome::Stored);
    changes_.InstanceStored();
    if (!instance.transcodeAttempted && instance.labels.receivedSyntax != nullptr &&
        instance.labels.storedSyntax != nullptr &&
        strcmp(instance.labels.receivedSyntax, instance.labels.storedSyntax) != 0)
    {
      // Transcoded by a transcoder that ran before this plugin's (e.g. a plugin loaded earlier).
      stats_.Count(Counter::TranscodedWithoutHook, labels, instance.storedNs);
    }
    RecordPairing(correlator_.Stored(instance.instanceKey, instance.storedNs, labels.Key()), instance.storedNs);
  }


  void IngestRecorder::Remember(const CompletedInstance& instance, const InstanceRecord& record,
                                const InstanceLabels& labels, Outcome outcome)
  {
    RecentInstance recent;
    FillRecentInstance(recent, record, instance.startWallNs, labels, outcome, CurrentThreadNumber(),
                       instance.instanceId);
    recent_.Push(recent);
  }


  void IngestRecorder::InstanceAbandoned(Transport transport, Outcome outcome, const char* receivedSyntax)
  {
    stats_.RecordOutcome(outcome, labels_.InternAbandoned(transport, receivedSyntax));
  }


  int64_t IngestRecorder::NewInstanceChange(uint64_t instanceKey, int64_t nowNs)
  {
    const ChangeCorrelator::Pairing pairing = correlator_.NewInstanceChange(instanceKey, nowNs);
    RecordPairing(pairing, nowNs);
    return pairing.paired ? nowNs - pairing.lagNs : 0;
  }


  void IngestRecorder::InstanceDeleted(uint64_t instanceKey)
  {
    correlator_.InstanceDeleted(instanceKey);
  }


  void IngestRecorder::RecordPairing(const ChangeCorrelator::Pairing& pairing, int64_t nowNs)
  {
    if (!pairing.paired)
    {
      return;
    }
    const InstanceLabels labels = InstanceLabels::FromKey(pairing.labelsKey);
    if (pairing.lagNs >= 0)
    {
      stats_.RecordChangeDispatch(labels, pairing.lagNs, nowNs);
    }
    else
    {
      stats_.Count(Counter::ChangesBeforeStored, labels, nowNs);
    }
  }
}
