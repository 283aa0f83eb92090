// Turns closed timelines into statistics: decides stored vs already stored, pairs the instance
// with its NewInstance change and (C-STORE) with the previous instance of its peer, and records into
// IngestStats. Called on the ingesting thread (InstanceCompleted, RecordEnded), which decides what
// must be decided in Orthanc's order and leaves the rest of a stored instance's recording in a queue
// (StoredQueue) that the plugin's thread drains (Drain), off Orthanc's locks; and on Orthanc's change
// thread (NewInstanceChange).
#pragma once

#include "Correlation/AssociationTracker.h"
#include "Correlation/ChangeCorrelator.h"
#include "Correlation/DicomConnections.h"
#include "Correlation/ChangeQueueStats.h"
#include "Correlation/StorageCondition.h"
#include "Metrics/IngestStats.h"
#include "Metrics/InstanceMeasurement.h"
#include "Metrics/RecentInstances.h"
#include "Labels/LabelCatalog.h"
#include "Recording/StoredQueue.h"
#include "Timeline/InstanceTimeline.h"

#include <atomic>
#include <functional>
#include <mutex>

namespace IngestPerf
{
  // The one place where a closed timeline becomes durations: every phase observed for this
  // instance, kNotMeasured for the others. associationGapNs: -1 when not measured.
  // changeFirstNs: when the instance's NewInstance change reached OnChange, if before its OnStored; 0 if not.
  InstanceMeasurement Measure(const CompletedInstance& instance, int64_t associationGapNs, int64_t changeFirstNs = 0);

  // The outcome of a record that ended without OnStored, and for a failure its reason: from how far
  // it got, what timed storage saw of it (when active), and the state of the storage then.
  Outcome OutcomeOf(const EndedRecord& record, bool timedStorage, StorageState storage, FailureReason& reason);

  class IngestRecorder : public TimelineSink
  {
  public:
    // storage: read when naming why a store failed after the filters (null: unknown); timedStorage:
    // the plugin's storage area saw the writes; connections: Orthanc's DICOM connections, which tell
    // one association from the next (null: associations are inferred).
    IngestRecorder(IngestStats& stats, LabelCatalog& labels, ChangeCorrelator& correlator,
                   AssociationTracker& associations, ChangeQueueStats& changes, RecentInstances& recent,
                   bool overwriteInstances, const StorageCondition* storage = nullptr, bool timedStorage = false,
                   DicomConnections* connections = nullptr);

    // Both count only what started after the last reset. A stored instance is recorded once drained. A record that
    // ended after the filters is counted by ClassifyPending, when the plugin's thread has looked at the storage (why it
    // failed depends on it); the others at once.
    void InstanceCompleted(const CompletedInstance& instance) override;
    void RecordEnded(const EndedRecord& record) override;

    // The plugin's thread, at its ticks and every kDrainEvery instances, and a reader before it reads:
    // records the stored instances queued so far (one drainer at a time). Returns how many. A C-STORE
    // instance stored before the check of the connections its filter asked for is held, with those
    // after it, until that check has run, at most a second after it was stored (then named at the
    // thread's next drain); `nameHeldNow`: the one held now is named as the table is.
    size_t Drain(bool nameHeldNow = false);
    // When the instance held was stored (monotonic), 0 when none is.
    int64_t HeldStoredNs() const { return heldStoredNs_.load(std::memory_order_relaxed); }
    void SetHoldAtMost(int64_t ns) { holdAtMostNs_ = ns; }  // tests, before any instance
    // The label values age out (LabelCatalog::Rotate) and the streams of their combinations are
    // folded into "(other)" (IngestStats::FoldStreams). The plugin's thread; returns the streams folded.
    size_t AgeLabels(int64_t keepUsedSinceNs = INT64_MAX);
    static constexpr size_t kQueueCapacity = 1024;
    static constexpr size_t kDrainEvery = kQueueCapacity / 4;
    // Asks the plugin's thread to drain soon (every kDrainEvery instances; it drains at its ticks
    // anyway). Set by the entry point.
    void SetDrainWanted(std::function<void()> drainWanted) { drainWanted_ = std::move(drainWanted); }

    // The plugin's thread, after assessing the storage: counts the records ended after the filters
    // since the last call, and those ended at ReceivedInstance where SetInstanceExists was called.
    // Returns how many.
    size_t ClassifyPending();
    static constexpr size_t kPendingCapacity = 256;  // beyond, counted at once with what is known

    // Returns the OnStored time of the instance if it was already stored, 0 otherwise.
    int64_t NewInstanceChange(uint64_t instanceKey, int64_t nowNs);
    void InstanceDeleted(uint64_t instanceKey);

    // Records that ended after the instance filters without being stored, since the start: when it
    // moves, the storage is assessed again (IngestState::Tick).
    uint64_t FailuresAfterFilters() const { return failuresAfterFilters_.load(std::memory_order_relaxed); }

    // How a C-STORE instance's connection is found (IngestState::ConnectionOf): as of `atNs`
    // (DicomConnections::kNow on the ingest path), or later (`later`: 0 returned) when the check of
    // the connections its instance filter asked for (at `checkSinceNs`; 0: none asked) has not run
    // yet. Without it, the table of connections as it is.
    using ConnectionOf =
      std::function<uint64_t(LabelId peer, LabelId remoteAet, int64_t atNs, int64_t checkSinceNs, bool& later)>;
    void SetConnectionOf(ConnectionOf connectionOf) { connectionOf_ = std::move(connectionOf); }

    // Where the running Orthanc answers a duplicate before any filter (1.13.0, OverwriteInstances
    // "Never" or "IfChanged"), a record that ended at ReceivedInstance is counted by the plugin's thread,
    // alreadyStored when Orthanc's index holds an instance of its SOP Instance UID. Set by the entry
    // point there only; called by ClassifyPending only, never on Orthanc's threads.
    using InstanceExists = std::function<bool(const char* sopInstanceUid)>;
    void SetInstanceExists(InstanceExists instanceExists) { instanceExists_ = std::move(instanceExists); }

  private:
    // A C-STORE instance's connection, as of `atNs` (see SetConnectionOf), and the calling AET seen on it.
    uint64_t NameConnection(const CompletedInstance& instance, const InstanceLabels& labels, int64_t atNs,
                            int64_t checkSinceNs, bool& later);
    // A stored instance's recording, from its entry: durations, histograms, windows, the association.
    void Record(const StoredEntry& entry);
    // `labels`, or "(other)" but for the transport if interned in tables that turned since.
    InstanceLabels Current(const InstanceLabels& labels) const;
    // lookUp: on the plugin's thread, where a record ended at ReceivedInstance may be looked up.
    void Count(const EndedRecord& record, bool lookUp);
    // Ended at ReceivedInstance with a UID to look up, where Orthanc answers duplicates there.
    bool MayBeEarlyDuplicate(const EndedRecord& record) const
    {
      return record.stage == RecordStage::Received && instanceExists_ && record.sopInstanceUid[0] != '\0';
    }
    // nowNs: when the pairing was made (OnStored or the change), for the time windows.
    void RecordPairing(const ChangeCorrelator::Pairing& pairing, int64_t nowNs);
    void Remember(const StoredEntry& entry, const InstanceMeasurement& measurement, Outcome outcome);

    IngestStats& stats_;
    LabelCatalog& labels_;
    ChangeCorrelator& correlator_;
    AssociationTracker& associations_;
    ChangeQueueStats& changes_;
    RecentInstances& recent_;
    bool overwriteInstances_;
    const StorageCondition* storage_;
    bool timedStorage_;
    DicomConnections* connections_;
    std::atomic<uint64_t> failuresAfterFilters_{0};
    ConnectionOf connectionOf_;
    InstanceExists instanceExists_;
    std::function<void()> drainWanted_;
    StoredQueue queue_{kQueueCapacity};
    std::mutex drainMutex_;
    StoredEntry drainEntry_;                // Drain's, under drainMutex_
    std::atomic<int64_t> heldStoredNs_{0};  // drainEntry_ waits for its connections' check
    int64_t holdAtMostNs_ = 1000000000;
    std::atomic<bool> pendingLocked_{false};
    size_t pendingCount_ = 0;
    EndedRecord pending_[kPendingCapacity];
  };
}
