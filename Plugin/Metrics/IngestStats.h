// The aggregate: a StreamTable of labelled streams, where each instance is recorded once, and a
// per-second rate window per transport. A transport's figures are the merge of its streams, made
// by the reader. Memory is fixed by the configuration, whatever the number of instances. Every
// write is an atomic operation; no writer takes a lock. Readers take snapshots, through one lock of
// their own that keeps what they read while nothing is recorded (Reading).
#pragma once

#include "Vocabulary/IngestVocabulary.h"
#include "Metrics/InstanceMeasurement.h"
#include "Labels/InstanceLabels.h"
#include "Metrics/RateWindow.h"
#include "Metrics/PhaseParts.h"
#include "Metrics/StreamStats.h"
#include "Metrics/StreamTable.h"
#include "Metrics/StatsSnapshot.h"
#include "Metrics/TimeWindows.h"
#include "Platform/MappedAllocator.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace IngestPerf
{
  // Every labelled stream's snapshot (GET /perf/metrics sums them per sender: 180 KB with MaxStreams
  // 128), in pages of their own (MappedAllocator).
  using StreamSnapshots = std::vector<std::pair<InstanceLabels, TransportSnapshot>,
                                      MappedAllocator<std::pair<InstanceLabels, TransportSnapshot>>>;

  class IngestStats
  {
  public:
    // The monotonic clock of the time windows' events that carry no time of their own (outcomes,
    // counters, change dispatch); stored instances use their OnStored time. Null: no time windows
    // (the benchmarks compare the hot path with and without them).
    using Clock = int64_t (*)();

    IngestStats(int64_t nowNs, int64_t wallNowNs, size_t maxStreams, Clock windowClock = nullptr);
    IngestStats(const IngestStats&) = delete;
    IngestStats& operator=(const IngestStats&) = delete;

    // The transport is the one of the labels.
    void RecordStored(const InstanceMeasurement& measurement, const InstanceLabels& labels);
    // nowNs: the monotonic time of the event for the time windows, which every caller but one
    // already has (kNow: read the window clock).
    static constexpr int64_t kNow = -1;
    void RecordOutcome(Outcome outcome, const InstanceLabels& labels, int64_t nowNs = kNow);
    // One sample of a phase outside an instance's record: changeDispatch.
    void RecordPhase(Phase phase, const InstanceLabels& labels, int64_t ns, int64_t nowNs);
    // One phase of an instance's measurement, with its parts if it was split: the gaps before a
    // duplicate, whose other phases are not counted.
    void RecordPhaseOf(const InstanceMeasurement& measurement, Phase phase, const InstanceLabels& labels);
    void Count(Counter counter, const InstanceLabels& labels, int64_t nowNs);
    void RecordCallbackError();
    // An SDK call of the hot path that answered its failure value (null, -1, unknown origin).
    void RecordSdkCallFailed();

    void Reset(int64_t nowNs, int64_t wallNowNs);
    // The label values aged out (LabelCatalog::Rotate): the label combinations' streams folded into
    // their transports' "(other)" streams (StreamTable::FoldIntoOverflow). The plugin's thread.
    size_t FoldStreams(const std::function<bool(const InstanceLabels&)>& keep = nullptr);
    // Monotonic time of the last POST /perf/reset (INT64_MIN before any): what started before it
    // is not counted after it.
    int64_t CountsFromNs() const { return countsFromNs_.load(std::memory_order_relaxed); }
    // OnStored of an instance that the plugin's thread had concluded as ended before (an error).
    void RecordConcludedEarly() { concludedEarly_.fetch_add(1, std::memory_order_relaxed); }
    // A stored instance recorded on Orthanc's thread: the plugin's thread's queue was full.
    void RecordStoredQueueFull() { storedQueueFull_.fetch_add(1, std::memory_order_relaxed); }

    // A Reading holds the readers' lock (which Reset also holds: nothing is read while the streams
    // are cleared) and merges the streams per transport once, for every snapshot taken through it
    // (what IngestState::Collect takes for one answer); the methods of IngestStats of the same
    // names make a Reading each. Each reading reads the streams again: nothing is kept from one
    // answer to the next (every route answers within a millisecond of /system with every table
    // full, docs/measurements/plugin-cost.md). Readers only: the hot path never sees their lock.
    class Reading
    {
    public:
      explicit Reading(const IngestStats& stats);
      Reading(const Reading&) = delete;
      Reading& operator=(const Reading&) = delete;

      // partQuantiles: also the quantiles of each phase's parts (StatsSnapshot::partQuantiles).
      StatsSnapshot Snapshot(int64_t nowNs, bool partQuantiles = true) const;
      StreamSnapshots SnapshotEachStream(uint32_t phases = ~uint32_t(0)) const;
      std::vector<std::pair<InstanceLabels, TransportSnapshot>> SnapshotFailingStreams() const;
      std::vector<std::pair<InstanceLabels, HistogramSnapshot>> SnapshotAssociationGaps() const;
      WindowSnapshot SnapshotWindow(Window window, int64_t nowNs) const;

    private:
      const IngestStats& stats_;
      std::lock_guard<std::mutex> lock_;
      // The streams merged per transport; on the heap: tens of KB, readers' stacks are small.
      std::unique_ptr<std::array<TransportSnapshot, kTransportCount>> transports_;
    };

    StatsSnapshot Snapshot(int64_t nowNs, bool partQuantiles = true) const;
    // The labelled streams whose labels pass `filter` (all when empty), merged per transport and,
    // when `groupBy` is given, per value of that label.
    GroupedSnapshot SnapshotGrouped(const std::function<bool(const InstanceLabels&)>& filter,
                                    const LabelDimension* groupBy) const;

    // Every labelled stream in use, each its own snapshot (no rate windows, no parts, no sizes):
    // what the Prometheus exposition lists with all its labels.
    // Of the phases, those of `phases` (bit p: Phase p) only.
    StreamSnapshots SnapshotEachStream(uint32_t phases = ~uint32_t(0)) const;

    // The outcomes and counters (no histogram) of each stream with a failed instance.
    std::vector<std::pair<InstanceLabels, TransportSnapshot>> SnapshotFailingStreams() const;

    // The associationGap phase of each DICOM stream: cheaper than whole streams.
    std::vector<std::pair<InstanceLabels, HistogramSnapshot>> SnapshotAssociationGaps() const;

    // The transports over a recent window (empty when the windows are off).
    WindowSnapshot SnapshotWindow(Window window, int64_t nowNs) const;
    // The same window slot by slot (empty when the windows are off).
    WindowSlots SlotsOfWindow(Window window, int64_t nowNs) const;
    bool HasWindows() const { return windowClock_ != nullptr; }

    const StreamTable& Streams() const { return streams_; }

  private:
    void RecordPartHistograms(Transport transport, const InstanceMeasurement& measurement, Phase phase);

    struct MappedFree
    {
      void operator()(PhasePartHistograms* block) const;
    };

    mutable std::mutex readMutex_;

    std::array<RateWindow, kTransportCount> rates_;
    // [transport][phase]: the quantiles of each part since the reset (pages written only where used).
    std::unique_ptr<PhasePartHistograms, MappedFree> partHistograms_;
    StreamTable streams_;
    Clock windowClock_;
    TimeWindows windows_;
    std::atomic<uint64_t> callbackErrors_;
    std::atomic<uint64_t> sdkCallsFailed_;
    std::atomic<uint64_t> concludedEarly_{0};
    std::atomic<uint64_t> storedQueueFull_{0};
    std::atomic<int64_t> countsFromNs_{INT64_MIN};
    std::atomic<int64_t> resetNs_;
    std::atomic<int64_t> resetWallNs_;
    // OnStored of the first and the last stored instance since the reset (monotonic; 0: none).
    std::atomic<int64_t> firstStoredNs_{0};
    std::atomic<int64_t> lastStoredNs_{0};
  };
}
