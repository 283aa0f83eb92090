// The aggregate: one StreamStats per transport (with a per-second rate window) for the default
// answer, and a StreamTable of labelled series for filters and groupBy. Memory is fixed by the
// configuration, whatever the number of instances. Every write is an atomic operation; there is
// no lock. Readers take snapshots.
#pragma once

#include "Metrics/IngestVocabulary.h"
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
  struct CompletedInstance;

  class IngestStats
  {
  public:
    IngestStats(int64_t nowNs, int64_t wallNowNs, size_t maxSeries);
    IngestStats(const IngestStats&) = delete;
    IngestStats& operator=(const IngestStats&) = delete;

    // associationGapNs: -1 when not measured. The transport is the one of the labels.
    void RecordStored(const CompletedInstance& instance, int64_t associationGapNs, const InstanceLabels& labels);
    void RecordOutcome(Outcome outcome, const InstanceLabels& labels);
    void RecordChangeDispatch(const InstanceLabels& labels, int64_t lagNs);
    void RecordChangeBeforeStored(const InstanceLabels& labels);
    void RecordTranscodedWithoutHook(const InstanceLabels& labels);
    // Once per HTTP request, labelled by transport only (an answer covers all its instances).
    void RecordHttpAnswer(const InstanceLabels& labels, bool clientAcceptsCompression);
    void RecordCallbackError();

    void Reset(int64_t nowNs, int64_t wallNowNs);

    StatsSnapshot Snapshot(int64_t nowNs) const;
    // The labelled series whose labels pass `filter` (all when empty), merged per transport and,
    // when `groupBy` is given, per value of that label.
    GroupedSnapshot SnapshotGrouped(const std::function<bool(const InstanceLabels&)>& filter,
                                    const LabelDimension* groupBy) const;

    // One phase of the matching labelled series: cheaper than whole series when one is enough.
    std::vector<std::pair<InstanceLabels, HistogramSnapshot>>
    SnapshotSeriesPhase(Phase phase, const std::function<bool(const InstanceLabels&)>& filter) const;

    const StreamTable& Series() const { return series_; }

  private:
    struct PerTransport
    {
      StreamStats stats;
      RateWindow rate;
    };

    PerTransport& For(const InstanceLabels& labels) { return transports_[static_cast<size_t>(labels.GetTransport())]; }

    std::array<PerTransport, kTransportCount> transports_;
    StreamTable series_;
    std::atomic<uint64_t> callbackErrors_;
    std::atomic<int64_t> resetNs_;
    std::atomic<int64_t> resetWallNs_;
  };
}
