// The aggregate: a StreamTable of labelled streams, where each instance is recorded once, and a
// per-second rate window per transport. A transport's figures are the merge of its streams, made
// by the reader. Memory is fixed by the configuration, whatever the number of instances. Every
// write is an atomic operation; there is no lock. Readers take snapshots.
#pragma once

#include "Vocabulary/IngestVocabulary.h"
#include "Metrics/InstanceRecord.h"
#include "Labels/InstanceLabels.h"
#include "Metrics/RateWindow.h"
#include "Metrics/StreamStats.h"
#include "Metrics/StreamTable.h"
#include "Metrics/StatsSnapshot.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace IngestPerf
{
  class IngestStats
  {
  public:
    IngestStats(int64_t nowNs, int64_t wallNowNs, size_t maxSeries);
    IngestStats(const IngestStats&) = delete;
    IngestStats& operator=(const IngestStats&) = delete;

    // The transport is the one of the labels.
    void RecordStored(const InstanceRecord& record, const InstanceLabels& labels);
    void RecordOutcome(Outcome outcome, const InstanceLabels& labels);
    void RecordChangeDispatch(const InstanceLabels& labels, int64_t lagNs);
    void Count(Counter counter, const InstanceLabels& labels);
    void RecordCallbackError();
    // An SDK call of the hot path that answered its failure value (null, -1, unknown origin).
    void RecordSdkCallFailed();

    void Reset(int64_t nowNs, int64_t wallNowNs);

    StatsSnapshot Snapshot(int64_t nowNs) const;
    // The labelled series whose labels pass `filter` (all when empty), merged per transport and,
    // when `groupBy` is given, per value of that label.
    GroupedSnapshot SnapshotGrouped(const std::function<bool(const InstanceLabels&)>& filter,
                                    const LabelDimension* groupBy) const;

    // Every labelled series in use, each its own snapshot (no rate windows): what the Prometheus
    // exposition lists with all its labels.
    std::vector<std::pair<InstanceLabels, TransportSnapshot>> SnapshotEachSeries() const;

    // One phase of the matching labelled series: cheaper than whole series when one is enough.
    std::vector<std::pair<InstanceLabels, HistogramSnapshot>>
    SnapshotSeriesPhase(Phase phase, const std::function<bool(const InstanceLabels&)>& filter) const;

    const StreamTable& Series() const { return series_; }

  private:
    std::array<RateWindow, kTransportCount> rates_;
    StreamTable series_;
    std::atomic<uint64_t> callbackErrors_;
    std::atomic<uint64_t> sdkCallsFailed_;
    std::atomic<int64_t> resetNs_;
    std::atomic<int64_t> resetWallNs_;
  };
}
