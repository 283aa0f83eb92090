#include "Recording/IngestRecorder.h"

#include "Platform/BoundedSpinLock.h"
#include "Platform/MonotonicClock.h"
#include "Recording/DuplicateDetection.h"
#include "Timeline/ThreadTimelines.h"

#include <algorithm>
#include <cstring>

namespace IngestPerf
{
  namespace
  {
    // The parts of `phase` (measured already) from the thread's clocks at its start and its end, kept
    // within its duration so that they add up to it (the clocks are read a few hundred ns after the
    // monotonic time of their hook).
    void Split(InstanceMeasurement& measurement, Phase phase, const ThreadClockReading& start,
               const ThreadClockReading& end)
    {
      const int64_t duration = measurement.Phase(phase);
      if (duration == InstanceMeasurement::kNotMeasured || !start.HasCpu() || !end.HasCpu())
      {
        return;
      }
      const int64_t cpu = std::clamp<int64_t>(end.cpuNs - start.cpuNs, 0, duration);
      const int64_t delay = (start.HasRunDelay() && end.HasRunDelay())
                              ? std::clamp<int64_t>(end.runDelayNs - start.runDelayNs, 0, duration - cpu)
                              : InstanceMeasurement::kNotMeasured;
      measurement.SetParts(phase, cpu, delay);
    }

    // The same from two advances already summed (the creates of timed storage).
    void SplitSums(InstanceMeasurement& measurement, Phase phase, int64_t cpuNs, int64_t runDelayNs)
    {
      ThreadClockReading start;
      start.cpuNs = 0;
      start.runDelayNs = runDelayNs == ThreadClockReading::kUnknown ? ThreadClockReading::kUnknown : 0;
      ThreadClockReading end;
      end.cpuNs = cpuNs;
      end.runDelayNs = runDelayNs;
      Split(measurement, phase, start, end);
    }

    void SplitPhases(InstanceMeasurement& measurement, const CompletedInstance& instance)
    {
      const InstanceClocks& clocks = instance.clocks;
      // The start's clocks are the instance's only if read at its first event (not for an instance
      // whose request was not an ingest one, say).
      const ThreadClockReading start =
        clocks.segmentStartNs == instance.segmentStartNs ? clocks.segmentStart : ThreadClockReading();
      // Where the plugin does not hold the ReceivedInstanceCallback, the instance's arrival is its filter.
      const ThreadClockReading& arrival = instance.receivedNs != 0 ? clocks.received : clocks.filtered;
      Split(measurement, Phase::Receive, start, arrival);
      Split(measurement, Phase::PreStore, clocks.received, clocks.filtered);
      Split(measurement, Phase::Transcode, clocks.transcodeStart,
            instance.transcodeEndNs != 0 ? clocks.transcodeEnd : clocks.filtered);
      const ThreadClockReading& filtersEnd = instance.filtersPassedNs != 0 ? clocks.filtersPassed : clocks.filtered;
      const ThreadClockReading& ownStored = instance.ownStoredNs != 0 ? clocks.ownStored : clocks.stored;
      Split(measurement, Phase::OtherFilters, clocks.filtered, clocks.filtersPassed);
      Split(measurement, Phase::Persist, filtersEnd, ownStored);
      Split(measurement, Phase::OtherOnStored, clocks.ownStored, clocks.stored);
      Split(measurement, Phase::StoragePrepare, filtersEnd, clocks.firstCreateStart);
      if (clocks.createCpuNs != ThreadClockReading::kUnknown)
      {
        SplitSums(measurement, Phase::StorageWrite, clocks.createCpuNs, clocks.createRunDelayNs);
      }
      Split(measurement, Phase::IndexUpdate, clocks.lastCreateEnd, ownStored);
      Split(measurement, Phase::ServerTotal, start, clocks.stored);
      // A gap before the instance is this thread's own only if it started at the thread's previous
      // OnStored (an association stays on its worker; a keep-alive connection on its civetweb thread).
      for (const Phase gap : {Phase::AssociationGap, Phase::RequestGap})
      {
        const int64_t ns = measurement.Phase(gap);
        if (ns != InstanceMeasurement::kNotMeasured && clocks.previousStoredNs != 0 &&
            measurement.PhaseStart(gap) == clocks.previousStoredNs)
        {
          Split(measurement, gap, clocks.previousStored, gap == Phase::AssociationGap ? arrival : start);
        }
      }
    }
  }


  InstanceMeasurement Measure(const CompletedInstance& instance, int64_t associationGapNs, int64_t changeFirstNs)
  {
    InstanceMeasurement measurement;
    measurement.storedBytes = instance.storedBytes;
    measurement.storedNs = instance.storedNs;
    measurement.startNs = instance.segmentStartNs;
    measurement.hasTimeline = instance.hasTimeline;
    if (!instance.hasTimeline)
    {
      return measurement;  // nothing but the size and the outcome: no phase has a start
    }
    measurement.transcodeAttempted = instance.transcodeAttempted;
    const int64_t arrivalNs = instance.ArrivalNs();
    if (instance.hasReceivePhase && arrivalNs != 0)
    {
      measurement.Set(Phase::Receive, instance.segmentStartNs, arrivalNs - instance.segmentStartNs);
    }
    if (instance.receivedNs != 0)
    {
      measurement.receivedBytes = static_cast<int64_t>(instance.receivedBytes);
      if (instance.filteredNs != 0)
      {
        measurement.Set(Phase::PreStore, instance.receivedNs, instance.filteredNs - instance.receivedNs);
      }
    }
    if (instance.transcodeStartNs != 0)
    {
      // A transcode done by Orthanc after our callback ends, at the latest, at the filter.
      const int64_t end = instance.transcodeEndNs != 0 ? instance.transcodeEndNs : instance.filteredNs;
      if (end >= instance.transcodeStartNs)
      {
        measurement.Set(Phase::Transcode, instance.transcodeStartNs, end - instance.transcodeStartNs);
      }
    }
    if (instance.filteredNs != 0)
    {
      // Between the plugin's two filters, and between its two OnStored: the callbacks of the plugins
      // loaded after it. Persist is what lies between those.
      const int64_t filtersEnd = instance.FiltersEndNs();
      const int64_t ownStored = instance.OwnStoredNs();
      if (instance.filtersPassedNs != 0)
      {
        measurement.Set(Phase::OtherFilters, instance.filteredNs, filtersEnd - instance.filteredNs);
      }
      measurement.Set(Phase::Persist, filtersEnd, ownStored - filtersEnd);
      if (instance.firstCreateStartNs != 0)
      {
        measurement.Set(Phase::StoragePrepare, filtersEnd, instance.firstCreateStartNs - filtersEnd);
        measurement.Set(Phase::StorageWrite, instance.firstCreateStartNs, instance.createTotalNs);
        measurement.Set(Phase::IndexUpdate, instance.lastCreateEndNs, ownStored - instance.lastCreateEndNs);
      }
    }
    // Orthanc queues the change when the index commits: what comes after that, up to this plugin's
    // OnStored, is the wait for the OnStored lock and the callbacks of the plugins loaded before it.
    if (changeFirstNs != 0 && instance.filteredNs != 0 && changeFirstNs >= instance.FiltersEndNs() &&
        changeFirstNs <= instance.OwnStoredNs())
    {
      measurement.Set(Phase::OnStoredWait, changeFirstNs, instance.OwnStoredNs() - changeFirstNs);
    }
    if (instance.ownStoredNs != 0)
    {
      measurement.Set(Phase::OtherOnStored, instance.ownStoredNs, instance.storedNs - instance.ownStoredNs);
    }
    measurement.Set(Phase::ServerTotal, instance.segmentStartNs, instance.storedNs - instance.segmentStartNs);
    if (associationGapNs >= 0)
    {
      // The gap ends at the instance's arrival (AssociationTracker::InstanceStored).
      measurement.Set(Phase::AssociationGap, arrivalNs - associationGapNs, associationGapNs);
    }
    if (instance.requestGapNs >= 0)
    {
      // The gap ends at the request's filter, the instance's first event.
      measurement.Set(Phase::RequestGap, instance.segmentStartNs - instance.requestGapNs, instance.requestGapNs);
    }
    if (instance.clocks.sampled)
    {
      SplitPhases(measurement, instance);
    }
    return measurement;
  }


  Outcome OutcomeOf(const EndedRecord& record, bool timedStorage, StorageState storage, FailureReason& reason)
  {
    reason = FailureReason::BeforeFilters;
    switch (record.stage)
    {
      case RecordStage::None:
      case RecordStage::Receiving:
        return Outcome::RequestWithoutInstance;
      case RecordStage::Received:
        return record.hasPart10Header ? Outcome::Failed : Outcome::NotDicom;
      case RecordStage::OtherFilters:
        return Outcome::Rejected;  // the instance filter of a plugin loaded after this one refused it
      case RecordStage::OtherOnStored:
        return Outcome::Stored;  // indexed; the OnStoredInstance callback of a later plugin failed
      case RecordStage::Filtered:
        break;
    }
    if (timedStorage)
    {
      if ((record.storage & kStorageCreateFailed) != 0)
      {
        reason = storage == StorageState::DiskFull ? FailureReason::DiskFull : FailureReason::StorageWrite;
        return Outcome::Failed;
      }
      if ((record.storage & kStorageCreated) != 0)
      {
        // Written, then no OnStored: the index did not take it (Orthanc removes the files when it
        // returns a failure, not when it throws).
        reason = storage == StorageState::QuotaPossible ? FailureReason::Quota : FailureReason::Index;
        return Outcome::Failed;
      }
      return Outcome::Rejected;  // past the filters and never written: a later filter discarded it
    }
    reason = storage == StorageState::DiskFull        ? FailureReason::DiskFull
             : storage == StorageState::QuotaPossible ? FailureReason::Quota
                                                      : FailureReason::AfterFilters;
    return Outcome::Failed;
  }


  IngestRecorder::IngestRecorder(IngestStats& stats, LabelCatalog& labels, ChangeCorrelator& correlator,
                                 AssociationTracker& associations, ChangeQueueStats& changes, RecentInstances& recent,
                                 bool overwriteInstances, const StorageCondition* storage, bool timedStorage,
                                 DicomConnections* connections) :
    stats_(stats),
    labels_(labels),
    correlator_(correlator),
    associations_(associations),
    changes_(changes),
    recent_(recent),
    overwriteInstances_(overwriteInstances),
    storage_(storage),
    timedStorage_(timedStorage),
    connections_(connections)
  {
  }


  void IngestRecorder::InstanceCompleted(const CompletedInstance& instance)
  {
    // On Orthanc's storing thread: what must be decided in OnStored's order (the labels, whether it
    // was stored already, its pairing with its NewInstance change, which the change thread reads),
    // then the rest of its recording is left to the plugin's thread (Drain).
    if (instance.concludedEarly)
    {
      stats_.RecordConcludedEarly();
    }
    StoredEntry entry;
    entry.instance = instance;
    entry.instance.labels = RawLabels();
    entry.instance.instanceId = nullptr;
    entry.labels = labels_.Intern(
      instance.transport, instance.labels, instance.storedBytes,
      {instance.remoteAet, instance.remoteIp, instance.calledAet, labels_.IsCurrent(instance.segmentStartNs)});
    entry.threadNumber = CurrentThreadNumber();
    if (instance.instanceId != nullptr)
    {
      strncpy(entry.instanceId, instance.instanceId, sizeof(entry.instanceId) - 1);
    }
    entry.alreadyStored = instance.removedAfterCreate;  // timed storage saw Orthanc remove what it wrote
    if (!entry.alreadyStored && !overwriteInstances_)
    {
      const ChangeCorrelator::Earlier earlier =
        correlator_.EarlierStores(instance.instanceKey, instance.segmentStartNs);
      const int64_t earlierNs = earlier.changeBefore ? earlier.changeNs : earlier.storedNs;
      DuplicateEvidence evidence{instance.receptionSecond, instance.startWallNs, earlierNs != 0,
                                 earlierNs != 0 ? instance.startWallNs - (instance.segmentStartNs - earlierNs) : 0};
      // Raced another store of the same instance (which Orthanc kept), or followed an earlier one.
      entry.alreadyStored = earlier.storedDuring || IsAlreadyStored(evidence);
    }
    if (!entry.alreadyStored)
    {
      // Orthanc's own count since start and the pairing of its NewInstance change go on whatever a
      // reset says (Record leaves out what started before it).
      changes_.InstanceStored(instance.storedNs);
      entry.pairing = correlator_.Stored(instance.instanceKey, instance.storedNs, entry.labels.Key());
      entry.transcodedWithoutHook = !instance.transcodeAttempted && instance.labels.receivedSyntax != nullptr &&
                                    instance.labels.storedSyntax != nullptr &&
                                    strcmp(instance.labels.receivedSyntax, instance.labels.storedSyntax) != 0;
    }
    if (instance.transport == Transport::Dicom && instance.peerKey != 0)
    {
      // Its connection as the table knows it now (the plugin's thread may see it closed by the time it
      // records the instance), unless the table may still hold the association before it.
      entry.connection =
        NameConnection(instance, entry.labels, DicomConnections::kNow, instance.filteredNs, entry.connectionLater);
    }
    size_t position = 0;
    if (!queue_.Push(entry, position))
    {
      stats_.RecordStoredQueueFull();
      Record(entry);  // the plugin's thread is behind by a whole queue: recorded here, as it used to be
    }
    else if ((position + 1) % kDrainEvery == 0 && drainWanted_)
    {
      drainWanted_();  // a quarter of the queue since the last: the plugin's thread drains it now
    }
  }


  uint64_t IngestRecorder::NameConnection(const CompletedInstance& instance, const InstanceLabels& labels, int64_t atNs,
                                          int64_t checkSinceNs, bool& later)
  {
    // A scan of the table's slots.
    const LabelId address = labels.Get(LabelDimension::RemoteIp);
    const LabelId aet = labels.Get(LabelDimension::RemoteAet);
    later = false;
    const uint64_t connection = connectionOf_             ? connectionOf_(address, aet, atNs, checkSinceNs, later)
                                : connections_ != nullptr ? connections_->Attribute(address, aet, atNs)
                                                          : 0;
    if (later || connections_ == nullptr)
    {
      return 0;
    }
    if (connection != 0)
    {
      connections_->SetRemoteAet(connection, aet, instance.storedNs);
    }
    else
    {
      connections_->SetRemoteAetBeforeReading(address, aet);
    }
    return connection;
  }


  InstanceLabels IngestRecorder::Current(const InstanceLabels& labels) const
  {
    const uint32_t generation = labels_.Generation();
    if (labels.generation == generation)
    {
      return labels;
    }
    if (labels.generation != kAmbiguousGeneration && labels.generation + 2 == generation && labels_.Kept(labels))
    {
      InstanceLabels kept = labels;  // interned just before the last ageing, which kept its values
      kept.generation = generation;
      return kept;
    }
    InstanceLabels agedOut = InstanceLabels::Overflow(labels.GetTransport());
    agedOut.generation = generation;
    return agedOut;
  }


  size_t IngestRecorder::AgeLabels(int64_t keepUsedSinceNs)
  {
    // Under the drain's lock: an instance drained meanwhile is recorded wholly before or after. The
    // streams of label combinations whose values were all kept go on.
    std::lock_guard<std::mutex> lock(drainMutex_);
    labels_.Rotate(keepUsedSinceNs);
    return stats_.FoldStreams([this](const InstanceLabels& labels) { return labels_.Kept(labels); });
  }


  size_t IngestRecorder::Drain(bool nameHeldNow)
  {
    std::lock_guard<std::mutex> lock(drainMutex_);
    size_t drained = 0;
    bool nameNow = nameHeldNow && heldStoredNs_.load(std::memory_order_relaxed) != 0;
    while (heldStoredNs_.load(std::memory_order_relaxed) != 0 || queue_.Pop(drainEntry_))
    {
      // A C-STORE instance stored before the plugin's thread checked the connections its filter asked
      // for waits for that check, and the entries after it with it: named earlier, the table may still
      // hold its sender's previous association open, and take it for that one's. At most holdAtMostNs_
      // (a check never asked for, at the start, holds nothing for long).
      const CompletedInstance& instance = drainEntry_.instance;
      if (drainEntry_.connectionLater && !nameNow && MonotonicNowNs() - instance.storedNs < holdAtMostNs_)
      {
        bool later = false;
        drainEntry_.connection =
          NameConnection(instance, drainEntry_.labels, instance.storedNs, instance.filteredNs, later);
        if (later)
        {
          heldStoredNs_.store(std::max<int64_t>(1, instance.storedNs), std::memory_order_relaxed);
          break;
        }
        drainEntry_.connectionLater = false;
      }
      nameNow = false;
      heldStoredNs_.store(0, std::memory_order_relaxed);
      Record(drainEntry_);
      drained++;
    }
    return drained;
  }


  void IngestRecorder::Record(const StoredEntry& entry)
  {
    const CompletedInstance& instance = entry.instance;
    // Its labels aged out since it was stored: counted under "(other)" (the recent instances keep
    // them, named by the tables of before).
    const InstanceLabels labels = Current(entry.labels);
    labels_.MarkUsed(labels, instance.storedNs);  // its values stay when the others age out
    // Every C-STORE instance, duplicate or not, ends a gap and starts the next one, before a reset
    // as after it (the association goes on).
    int64_t associationGap = -1;
    if (instance.transport == Transport::Dicom && instance.peerKey != 0)
    {
      // Stored before the plugin's thread had checked the connections its instance filter asked
      // for: named now, as of when it was stored (the check has seen the association before it gone).
      bool later = false;
      const uint64_t connection =
        entry.connectionLater ? NameConnection(instance, entry.labels, instance.storedNs, 0, later) : entry.connection;
      associationGap = associations_.InstanceStored(
        instance.peerKey, labels.Get(LabelDimension::RemoteAet), instance.ArrivalNs(), instance.storedNs,
        labels.Get(LabelDimension::RemoteIp), connection, labels.generation);
    }
    // Started before the last POST /perf/reset: every figure counts what started after it.
    if (instance.segmentStartNs < stats_.CountsFromNs())
    {
      return;
    }
    if (instance.httpAnswerEncoding != 0)
    {
      stats_.Count(instance.httpAnswerEncoding == 1 ? Counter::AnswersAcceptingCompression
                                                    : Counter::AnswersWithoutCompression,
                   labels, instance.storedNs);
    }
    const int64_t changeFirstNs =
      (entry.pairing.paired && entry.pairing.lagNs < 0) ? instance.storedNs + entry.pairing.lagNs : 0;
    const InstanceMeasurement measurement = Measure(instance, associationGap, changeFirstNs);
    if (entry.alreadyStored)
    {
      stats_.RecordOutcome(Outcome::AlreadyStored, labels, instance.storedNs);
      // The sender waited for this answer like any other: its gap is the association's, or the
      // connection's.
      stats_.RecordPhaseOf(measurement, Phase::AssociationGap, labels);
      stats_.RecordPhaseOf(measurement, Phase::RequestGap, labels);
      Remember(entry, measurement, Outcome::AlreadyStored);
      return;
    }
    stats_.RecordStored(measurement, labels);
    Remember(entry, measurement, Outcome::Stored);
    if (entry.transcodedWithoutHook)
    {
      // Transcoded by a transcoder that ran before this plugin's (e.g. a plugin loaded earlier).
      stats_.Count(Counter::TranscodedWithoutHook, labels, instance.storedNs);
    }
    RecordPairing(entry.pairing, instance.storedNs);
  }


  void IngestRecorder::Remember(const StoredEntry& entry, const InstanceMeasurement& measurement, Outcome outcome)
  {
    RecentInstance recent;
    FillRecentInstance(recent, measurement, entry.instance.startWallNs, entry.labels, outcome, entry.threadNumber,
                       entry.instanceId[0] != '\0' ? entry.instanceId : nullptr);
    recent_.Push(recent);
  }


  void IngestRecorder::RecordEnded(const EndedRecord& record)
  {
    if (record.sinceNs < stats_.CountsFromNs())
    {
      return;
    }
    const bool lookUp = MayBeEarlyDuplicate(record);
    if (record.stage == RecordStage::Filtered || lookUp)
    {
      if (!lookUp)
      {
        failuresAfterFilters_.fetch_add(1, std::memory_order_relaxed);
      }
      // Why it failed depends on the storage now, whether it was a duplicate on the index: the plugin's
      // thread counts it after looking.
      if (BoundedSpinLock(pendingLocked_))
      {
        const bool kept = pendingCount_ < kPendingCapacity;
        if (kept)
        {
          pending_[pendingCount_++] = record;
        }
        pendingLocked_.store(false, std::memory_order_release);
        if (kept)
        {
          return;
        }
      }
    }
    Count(record, false);
  }


  size_t IngestRecorder::ClassifyPending()
  {
    // A few at a time, oldest first: most ticks find none, and an array of kPendingCapacity records
    // (8 KB, built twice per tick) cost more than all the rest of the tick's own instructions.
    constexpr size_t kBatch = 16;
    size_t classified = 0;
    for (;;)
    {
      EndedRecord taken[kBatch];
      if (!BoundedSpinLock(pendingLocked_))
      {
        return classified;  // a store is adding one: at the next tick
      }
      const size_t count = std::min(pendingCount_, kBatch);
      std::copy(pending_, pending_ + count, taken);
      std::copy(pending_ + count, pending_ + pendingCount_, pending_);
      pendingCount_ -= count;
      pendingLocked_.store(false, std::memory_order_release);
      for (size_t i = 0; i < count; i++)
      {
        Count(taken[i], true);
      }
      classified += count;
      if (count < kBatch)
      {
        return classified;
      }
    }
  }


  void IngestRecorder::Count(const EndedRecord& record, bool lookUp)
  {
    if (record.sinceNs < stats_.CountsFromNs())
    {
      return;  // left pending across a reset: it started before it (and its label ids are forgotten)
    }
    FailureReason reason;
    const StorageState storage = storage_ != nullptr ? storage_->Now() : StorageState::Unknown;
    Outcome outcome = OutcomeOf(record, timedStorage_, storage, reason);
    if (lookUp && MayBeEarlyDuplicate(record) && instanceExists_(record.sopInstanceUid))
    {
      // Orthanc 1.13 found it in its index and answered AlreadyStored, before any filter. (A copy
      // that failed to parse while an instance of its UID was stored is counted so too.)
      outcome = Outcome::AlreadyStored;
    }
    IdentifiedLabels who{record.remoteAet, record.remoteIp, record.calledAet, labels_.IsCurrent(record.sinceNs)};
    DicomConnection connection;
    if (record.transport == Transport::Dicom && connections_ != nullptr &&
        connections_->OnlyOpenAt(record.sinceNs, connection))
    {
      // The one association open when it started was its own: its address, and, when the C-STORE
      // filter did not name its sender (refused before it), the calling AET of an instance stored on
      // that same association, if any (never guessed from the address: a router sends for many).
      who.remoteIp = connection.peer;
      if (who.remoteAet == kUnidentified)
      {
        who.remoteAet = connection.remoteAet;
      }
    }
    const InstanceLabels labels = labels_.InternEnded(record.transport, who);
    labels_.MarkUsed(labels, record.endedNs);  // a sender whose stores all fail stays named too
    stats_.RecordOutcome(outcome, labels, record.endedNs);
    if (outcome == Outcome::Failed)
    {
      stats_.Count(FailureCounter(reason), labels, record.endedNs);
    }
  }


  int64_t IngestRecorder::NewInstanceChange(uint64_t instanceKey, int64_t nowNs)
  {
    const ChangeCorrelator::Pairing pairing = correlator_.NewInstanceChange(instanceKey, nowNs);
    if (!pairing.paired || nowNs - pairing.lagNs < stats_.CountsFromNs())
    {
      return 0;  // the change of an instance stored before the last reset: not counted after it
    }
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
    // Interned at its OnStored, after storedNs: of the tables in use if they turned before it.
    InstanceLabels labels = InstanceLabels::FromKey(pairing.labelsKey);
    labels.generation = labels_.IsCurrent(nowNs - pairing.lagNs) ? labels_.Generation() : kAmbiguousGeneration;
    labels = Current(labels);
    if (pairing.lagNs >= 0)
    {
      stats_.RecordPhase(Phase::ChangeDispatch, labels, pairing.lagNs, nowNs);
    }
    else
    {
      stats_.Count(Counter::ChangesBeforeStored, labels, nowNs);
    }
  }
}
