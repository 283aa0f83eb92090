#include "IngestStats.h"

#include "InstanceTimeline.h"

namespace IngestPerf
{
  namespace
  {
    constexpr int64_t kNsPerSecond = 1000000000;

    void StoreMin(std::atomic<int64_t>& target, int64_t value)
    {
      int64_t current = target.load(std::memory_order_relaxed);
      while ((current == 0 || value < current) &&
             !target.compare_exchange_weak(current, value, std::memory_order_relaxed))
      {
      }
    }

    void StoreMax(std::atomic<int64_t>& target, int64_t value)
    {
      int64_t current = target.load(std::memory_order_relaxed);
      while (value > current && !target.compare_exchange_weak(current, value, std::memory_order_relaxed))
      {
      }
    }
  }


  void IngestStats::PerTransport::Reset()
  {
    for (PhaseHistogram& histogram : phases)
    {
      histogram.Reset();
    }
    receivedBytes.Reset();
    storedBytes.Reset();
    for (auto& outcome : outcomes)
    {
      outcome.store(0, std::memory_order_relaxed);
    }
    storedWithoutTimeline.store(0, std::memory_order_relaxed);
    changesBeforeStored.store(0, std::memory_order_relaxed);
    transcodeAttempts.store(0, std::memory_order_relaxed);
    firstStartNs.store(0, std::memory_order_relaxed);
    lastStoredNs.store(0, std::memory_order_relaxed);
    rate.Reset();
  }


  IngestStats::IngestStats(int64_t nowNs, int64_t wallNowNs)
  {
    Reset(nowNs, wallNowNs);
  }


  void IngestStats::RecordStored(const CompletedInstance& instance, int64_t associationGapNs)
  {
    PerTransport& stats = For(instance.transport);
    stats.outcomes[static_cast<size_t>(Outcome::Stored)].fetch_add(1, std::memory_order_relaxed);
    stats.storedBytes.Record(static_cast<int64_t>(instance.storedBytes));
    stats.rate.Record(instance.storedNs / kNsPerSecond, instance.storedBytes);
    StoreMax(stats.lastStoredNs, instance.storedNs);

    if (!instance.hasTimeline)
    {
      stats.storedWithoutTimeline.fetch_add(1, std::memory_order_relaxed);
      return;
    }

    StoreMin(stats.firstStartNs, instance.segmentStartNs);
    if (instance.transcodeAttempted)
    {
      stats.transcodeAttempts.fetch_add(1, std::memory_order_relaxed);
    }
    if (instance.receivedNs != 0)
    {
      stats.receivedBytes.Record(static_cast<int64_t>(instance.receivedBytes));
      if (instance.hasReceivePhase)
      {
        stats.phases[static_cast<size_t>(Phase::Receive)].Record(instance.receivedNs - instance.segmentStartNs);
      }
      if (instance.filteredNs != 0)
      {
        stats.phases[static_cast<size_t>(Phase::PreStore)].Record(instance.filteredNs - instance.receivedNs);
      }
    }
    if (instance.filteredNs != 0)
    {
      stats.phases[static_cast<size_t>(Phase::Persist)].Record(instance.storedNs - instance.filteredNs);
    }
    stats.phases[static_cast<size_t>(Phase::ServerTotal)].Record(instance.storedNs - instance.segmentStartNs);
    if (associationGapNs >= 0)
    {
      stats.phases[static_cast<size_t>(Phase::AssociationGap)].Record(associationGapNs);
    }
  }


  void IngestStats::RecordAlreadyStored(Transport transport)
  {
    RecordOutcome(transport, Outcome::AlreadyStored);
  }


  void IngestStats::RecordOutcome(Transport transport, Outcome outcome)
  {
    For(transport).outcomes[static_cast<size_t>(outcome)].fetch_add(1, std::memory_order_relaxed);
  }


  void IngestStats::RecordChangeDispatch(Transport transport, int64_t lagNs)
  {
    For(transport).phases[static_cast<size_t>(Phase::ChangeDispatch)].Record(lagNs);
  }


  void IngestStats::RecordChangeBeforeStored(Transport transport)
  {
    For(transport).changesBeforeStored.fetch_add(1, std::memory_order_relaxed);
  }


  void IngestStats::RecordCallbackError()
  {
    callbackErrors_.fetch_add(1, std::memory_order_relaxed);
  }


  void IngestStats::Reset(int64_t nowNs, int64_t wallNowNs)
  {
    for (PerTransport& transport : transports_)
    {
      transport.Reset();
    }
    callbackErrors_.store(0, std::memory_order_relaxed);
    resetNs_.store(nowNs, std::memory_order_relaxed);
    resetWallNs_.store(wallNowNs, std::memory_order_relaxed);
  }


  StatsSnapshot IngestStats::Snapshot(int64_t nowNs) const
  {
    StatsSnapshot snapshot;
    snapshot.takenNs = nowNs;
    snapshot.resetNs = resetNs_.load(std::memory_order_relaxed);
    snapshot.resetWallNs = resetWallNs_.load(std::memory_order_relaxed);
    snapshot.callbackErrors = callbackErrors_.load(std::memory_order_relaxed);
    const int64_t nowSecond = nowNs / kNsPerSecond;

    for (size_t t = 0; t < kTransportCount; t++)
    {
      const PerTransport& source = transports_[t];
      TransportSnapshot& target = snapshot.transports[t];
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        target.phases[p] = source.phases[p].Snapshot();
      }
      target.receivedBytes = source.receivedBytes.Snapshot();
      target.storedBytes = source.storedBytes.Snapshot();
      for (size_t o = 0; o < kOutcomeCount; o++)
      {
        target.outcomes[o] = source.outcomes[o].load(std::memory_order_relaxed);
      }
      target.storedWithoutTimeline = source.storedWithoutTimeline.load(std::memory_order_relaxed);
      target.changesBeforeStored = source.changesBeforeStored.load(std::memory_order_relaxed);
      target.transcodeAttempts = source.transcodeAttempts.load(std::memory_order_relaxed);
      target.firstStartNs = source.firstStartNs.load(std::memory_order_relaxed);
      target.lastStoredNs = source.lastStoredNs.load(std::memory_order_relaxed);
      const RateWindow::Totals last10 = source.rate.Sum(nowSecond, 10);
      const RateWindow::Totals last60 = source.rate.Sum(nowSecond, 60);
      target.last10sInstances = last10.instances;
      target.last10sBytes = last10.bytes;
      target.last60sInstances = last60.instances;
      target.last60sBytes = last60.bytes;
    }
    return snapshot;
  }
}
