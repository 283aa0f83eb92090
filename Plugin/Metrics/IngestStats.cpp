#include "Metrics/IngestStats.h"

#include <algorithm>

namespace IngestPerf
{
  namespace
  {
    constexpr int64_t kNsPerSecond = 1000000000;
    constexpr size_t kPartHistograms = kTransportCount * kPhaseCount;
  }


  void IngestStats::MappedFree::operator()(PhasePartHistograms* block) const
  {
    IngestPerf::MappedFree(block, kPartHistograms * sizeof(PhasePartHistograms));
  }


  IngestStats::IngestStats(int64_t nowNs, int64_t wallNowNs, size_t maxStreams, Clock windowClock) :
    // Zero pages from the system are empty histograms (nothing to construct, as for the streams).
    partHistograms_(static_cast<PhasePartHistograms*>(MappedAllocate(kPartHistograms * sizeof(PhasePartHistograms)))),
    streams_(maxStreams),
    windowClock_(windowClock),
    windows_(nowNs)
  {
    Reset(nowNs, wallNowNs);
    countsFromNs_.store(INT64_MIN, std::memory_order_relaxed);  // nothing started before the plugin counts less
  }


  void IngestStats::RecordPartHistograms(Transport transport, const InstanceMeasurement& measurement, Phase phase)
  {
    if (measurement.HasParts(phase))
    {
      partHistograms_.get()[static_cast<size_t>(transport) * kPhaseCount + static_cast<size_t>(phase)].Record(
        measurement.Phase(phase), measurement.CpuNs(phase), measurement.RunDelayNs(phase));
    }
  }


  void IngestStats::RecordStored(const InstanceMeasurement& measurement, const InstanceLabels& labels)
  {
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      RecordPartHistograms(labels.GetTransport(), measurement, static_cast<Phase>(p));
    }
    // Two relaxed reads and, rarely, a store: the idle window says when ingest last happened.
    int64_t none = 0;
    if (firstStoredNs_.load(std::memory_order_relaxed) == 0)
    {
      firstStoredNs_.compare_exchange_strong(none, measurement.storedNs, std::memory_order_relaxed);
    }
    if (measurement.storedNs > lastStoredNs_.load(std::memory_order_relaxed))
    {
      lastStoredNs_.store(measurement.storedNs, std::memory_order_relaxed);
    }
    rates_[static_cast<size_t>(labels.GetTransport())].Record(measurement.storedNs / kNsPerSecond,
                                                              measurement.storedBytes);
    if (windowClock_ != nullptr)
    {
      windows_.RecordStored(labels.GetTransport(), measurement.storedNs, measurement);
    }
    streams_.FindOrInsert(labels).RecordStored(measurement);
  }


  void IngestStats::RecordOutcome(Outcome outcome, const InstanceLabels& labels, int64_t nowNs)
  {
    if (windowClock_ != nullptr)
    {
      windows_.RecordOutcome(labels.GetTransport(), nowNs == kNow ? windowClock_() : nowNs, outcome);
    }
    streams_.FindOrInsert(labels).RecordOutcome(outcome);
  }


  void IngestStats::RecordPhase(Phase phase, const InstanceLabels& labels, int64_t ns, int64_t nowNs)
  {
    if (windowClock_ != nullptr)
    {
      windows_.RecordPhase(labels.GetTransport(), nowNs, phase, ns);
    }
    streams_.FindOrInsert(labels).RecordPhase(phase, ns);
  }


  void IngestStats::RecordPhaseOf(const InstanceMeasurement& measurement, Phase phase, const InstanceLabels& labels)
  {
    RecordPartHistograms(labels.GetTransport(), measurement, phase);
    if (windowClock_ != nullptr)
    {
      windows_.RecordPhaseOf(labels.GetTransport(), measurement.storedNs, measurement, phase);
    }
    streams_.FindOrInsert(labels).RecordPhaseOf(measurement, phase);
  }


  void IngestStats::Count(Counter counter, const InstanceLabels& labels, int64_t nowNs)
  {
    if (windowClock_ != nullptr)
    {
      windows_.Count(labels.GetTransport(), nowNs, counter);
    }
    streams_.FindOrInsert(labels).Count(counter);
  }


  void IngestStats::RecordCallbackError()
  {
    callbackErrors_.fetch_add(1, std::memory_order_relaxed);
  }


  void IngestStats::RecordSdkCallFailed()
  {
    sdkCallsFailed_.fetch_add(1, std::memory_order_relaxed);
  }


  size_t IngestStats::FoldStreams(const std::function<bool(const InstanceLabels&)>& keep)
  {
    const std::lock_guard<std::mutex> lock(readMutex_);
    return streams_.FoldIntoOverflow(keep);
  }


  void IngestStats::Reset(int64_t nowNs, int64_t wallNowNs)
  {
    const std::lock_guard<std::mutex> lock(readMutex_);
    for (RateWindow& rate : rates_)
    {
      rate.Reset();
    }
    streams_.ResetAll();
    for (size_t i = 0; i < kPartHistograms; i++)
    {
      partHistograms_.get()[i].Clear();
    }
    windows_.Reset(nowNs);
    callbackErrors_.store(0, std::memory_order_relaxed);
    sdkCallsFailed_.store(0, std::memory_order_relaxed);
    concludedEarly_.store(0, std::memory_order_relaxed);
    storedQueueFull_.store(0, std::memory_order_relaxed);
    resetNs_.store(nowNs, std::memory_order_relaxed);
    resetWallNs_.store(wallNowNs, std::memory_order_relaxed);
    countsFromNs_.store(nowNs, std::memory_order_relaxed);
    firstStoredNs_.store(0, std::memory_order_relaxed);
    lastStoredNs_.store(0, std::memory_order_relaxed);
  }


  IngestStats::Reading::Reading(const IngestStats& stats) :
    stats_(stats),
    lock_(stats.readMutex_),
    transports_(new std::array<TransportSnapshot, kTransportCount>())
  {
    stats_.streams_.ForEach([this](const InstanceLabels& labels, const StreamStats& stats) {
      stats.AddTo((*transports_)[static_cast<size_t>(labels.GetTransport())]);
    });
  }


  StatsSnapshot IngestStats::Reading::Snapshot(int64_t nowNs, bool partQuantiles) const
  {
    StatsSnapshot snapshot;
    snapshot.takenNs = nowNs;
    snapshot.resetNs = stats_.resetNs_.load(std::memory_order_relaxed);
    snapshot.resetWallNs = stats_.resetWallNs_.load(std::memory_order_relaxed);
    snapshot.callbackErrors = stats_.callbackErrors_.load(std::memory_order_relaxed);
    snapshot.sdkCallsFailed = stats_.sdkCallsFailed_.load(std::memory_order_relaxed);
    snapshot.concludedEarly = stats_.concludedEarly_.load(std::memory_order_relaxed);
    snapshot.storedQueueFull = stats_.storedQueueFull_.load(std::memory_order_relaxed);
    snapshot.firstStoredNs = stats_.firstStoredNs_.load(std::memory_order_relaxed);
    snapshot.lastStoredNs = stats_.lastStoredNs_.load(std::memory_order_relaxed);
    const int64_t nowSecond = nowNs / kNsPerSecond;

    snapshot.transports = *transports_;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      TransportSnapshot& target = snapshot.transports[t];
      const RateWindow::Totals last10 = stats_.rates_[t].Sum(nowSecond, 10);
      const RateWindow::Totals last60 = stats_.rates_[t].Sum(nowSecond, 60);
      target.last10sInstances = last10.instances;
      target.last10sBytes = last10.bytes;
      target.last60sInstances = last60.instances;
      target.last60sBytes = last60.bytes;
    }
    if (partQuantiles)
    {
      std::vector<PhasePartQuantiles> quantiles(kPartHistograms);
      for (size_t i = 0; i < kPartHistograms; i++)
      {
        stats_.partHistograms_.get()[i].AddTo(quantiles[i]);
      }
      snapshot.partQuantiles = std::move(quantiles);
    }
    return snapshot;
  }


  StreamSnapshots IngestStats::Reading::SnapshotEachStream(uint32_t phases) const
  {
    StreamSnapshots each;
    each.reserve(stats_.streams_.Used() + kTransportCount);
    stats_.streams_.ForEach([&](const InstanceLabels& labels, const StreamStats& stats) {
      each.emplace_back(labels, TransportSnapshot());
      stats.AddTo(each.back().second, phases, false, false);  // the streams' lines show no parts nor sizes
    });
    return each;
  }


  std::vector<std::pair<InstanceLabels, TransportSnapshot>> IngestStats::Reading::SnapshotFailingStreams() const
  {
    std::vector<std::pair<InstanceLabels, TransportSnapshot>> failing;
    stats_.streams_.ForEach([&](const InstanceLabels& labels, const StreamStats& stats) {
      if (stats.outcomes[static_cast<size_t>(Outcome::Failed)].load(std::memory_order_relaxed) == 0)
      {
        return;
      }
      failing.emplace_back(labels, TransportSnapshot());
      for (size_t o = 0; o < kOutcomeCount; o++)
      {
        failing.back().second.outcomes[o] = stats.outcomes[o].load(std::memory_order_relaxed);
      }
      for (size_t c = 0; c < kCounterCount; c++)
      {
        failing.back().second.counters[c] = stats.counters[c].load(std::memory_order_relaxed);
      }
    });
    return failing;
  }


  std::vector<std::pair<InstanceLabels, HistogramSnapshot>> IngestStats::Reading::SnapshotAssociationGaps() const
  {
    std::vector<std::pair<InstanceLabels, HistogramSnapshot>> gaps;
    stats_.streams_.ForEach([&](const InstanceLabels& labels, const StreamStats& stats) {
      if (labels.GetTransport() == Transport::Dicom)
      {
        gaps.emplace_back(labels, stats.phases[static_cast<size_t>(Phase::AssociationGap)].Snapshot());
      }
    });
    return gaps;
  }


  WindowSnapshot IngestStats::Reading::SnapshotWindow(Window window, int64_t nowNs) const
  {
    return stats_.windows_.Snapshot(window, nowNs);
  }


  StatsSnapshot IngestStats::Snapshot(int64_t nowNs, bool partQuantiles) const
  {
    return Reading(*this).Snapshot(nowNs, partQuantiles);
  }


  WindowSnapshot IngestStats::SnapshotWindow(Window window, int64_t nowNs) const
  {
    return Reading(*this).SnapshotWindow(window, nowNs);
  }


  WindowSlots IngestStats::SlotsOfWindow(Window window, int64_t nowNs) const
  {
    return windows_.Slots(window, nowNs);
  }


  GroupedSnapshot IngestStats::SnapshotGrouped(const std::function<bool(const InstanceLabels&)>& filter,
                                               const LabelDimension* groupBy) const
  {
    GroupedSnapshot result;
    streams_.ForEach([&](const InstanceLabels& labels, const StreamStats& stats) {
      if (filter && !filter(labels))
      {
        return;
      }
      result.streamsMatched++;
      stats.AddTo(result.transports[static_cast<size_t>(labels.GetTransport())]);
      if (groupBy != nullptr)
      {
        const LabelId id = labels.Get(*groupBy);
        auto group = std::find_if(result.groups.begin(), result.groups.end(),
                                  [id](const auto& candidate) { return candidate.first == id; });
        if (group == result.groups.end())
        {
          result.groups.emplace_back(id, TransportSnapshot());
          group = result.groups.end() - 1;
        }
        stats.AddTo(group->second);
      }
    });
    return result;
  }


  StreamSnapshots IngestStats::SnapshotEachStream(uint32_t phases) const
  {
    return Reading(*this).SnapshotEachStream(phases);
  }


  std::vector<std::pair<InstanceLabels, TransportSnapshot>> IngestStats::SnapshotFailingStreams() const
  {
    return Reading(*this).SnapshotFailingStreams();
  }


  std::vector<std::pair<InstanceLabels, HistogramSnapshot>> IngestStats::SnapshotAssociationGaps() const
  {
    return Reading(*this).SnapshotAssociationGaps();
  }
}
