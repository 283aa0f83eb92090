#include "Metrics/StreamStats.h"

#include "Timeline/InstanceTimeline.h"

#include <algorithm>

namespace IngestPerf
{
  namespace
  {
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

    Histogram& Of(std::array<Histogram, kPhaseCount>& phases, Phase phase)
    {
      return phases[static_cast<size_t>(phase)];
    }
  }


  void StreamStats::RecordStored(const CompletedInstance& instance, int64_t associationGapNs)
  {
    outcomes[static_cast<size_t>(Outcome::Stored)].fetch_add(1, std::memory_order_relaxed);
    storedBytes.Record(static_cast<int64_t>(instance.storedBytes));
    StoreMax(lastStoredNs, instance.storedNs);

    if (!instance.hasTimeline)
    {
      storedWithoutTimeline.fetch_add(1, std::memory_order_relaxed);
      return;
    }

    StoreMin(firstStartNs, instance.segmentStartNs);
    if (instance.transcodeAttempted)
    {
      transcodeAttempts.fetch_add(1, std::memory_order_relaxed);
    }
    if (instance.receivedNs != 0)
    {
      receivedBytes.Record(static_cast<int64_t>(instance.receivedBytes));
      if (instance.hasReceivePhase)
      {
        Of(phases, Phase::Receive).Record(instance.receivedNs - instance.segmentStartNs);
      }
      if (instance.filteredNs != 0)
      {
        Of(phases, Phase::PreStore).Record(instance.filteredNs - instance.receivedNs);
      }
    }
    if (instance.transcodeStartNs != 0)
    {
      const int64_t end = instance.transcodeEndNs != 0 ? instance.transcodeEndNs : instance.filteredNs;
      if (end >= instance.transcodeStartNs)
      {
        Of(phases, Phase::Transcode).Record(end - instance.transcodeStartNs);
      }
    }
    if (instance.filteredNs != 0)
    {
      Of(phases, Phase::Persist).Record(instance.storedNs - instance.filteredNs);
      if (instance.firstCreateStartNs != 0)
      {
        Of(phases, Phase::StoragePrepare).Record(instance.firstCreateStartNs - instance.filteredNs);
        Of(phases, Phase::StorageWrite).Record(instance.createTotalNs);
        Of(phases, Phase::IndexUpdate).Record(instance.storedNs - instance.lastCreateEndNs);
      }
    }
    Of(phases, Phase::ServerTotal).Record(instance.storedNs - instance.segmentStartNs);
    if (associationGapNs >= 0)
    {
      Of(phases, Phase::AssociationGap).Record(associationGapNs);
    }
  }


  void StreamStats::RecordOutcome(Outcome outcome)
  {
    outcomes[static_cast<size_t>(outcome)].fetch_add(1, std::memory_order_relaxed);
  }


  void StreamStats::RecordChangeDispatch(int64_t lagNs)
  {
    Of(phases, Phase::ChangeDispatch).Record(lagNs);
  }


  void StreamStats::RecordChangeBeforeStored()
  {
    changesBeforeStored.fetch_add(1, std::memory_order_relaxed);
  }


  void StreamStats::RecordTranscodedWithoutHook()
  {
    transcodedWithoutHook.fetch_add(1, std::memory_order_relaxed);
  }


  void StreamStats::RecordHttpAnswer(bool clientAcceptsCompression)
  {
    (clientAcceptsCompression ? answersAcceptingCompression : answersWithoutCompression)
      .fetch_add(1, std::memory_order_relaxed);
  }


  void StreamStats::Reset()
  {
    for (Histogram& histogram : phases)
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
    transcodedWithoutHook.store(0, std::memory_order_relaxed);
    answersAcceptingCompression.store(0, std::memory_order_relaxed);
    answersWithoutCompression.store(0, std::memory_order_relaxed);
    firstStartNs.store(0, std::memory_order_relaxed);
    lastStoredNs.store(0, std::memory_order_relaxed);
  }


  bool StreamStats::IsEmpty() const
  {
    for (const auto& outcome : outcomes)
    {
      if (outcome.load(std::memory_order_relaxed) != 0)
      {
        return false;
      }
    }
    return true;
  }


  void StreamStats::CopyTo(TransportSnapshot& target) const
  {
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      target.phases[p] = phases[p].Snapshot();
    }
    target.receivedBytes = receivedBytes.Snapshot();
    target.storedBytes = storedBytes.Snapshot();
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      target.outcomes[o] = outcomes[o].load(std::memory_order_relaxed);
    }
    target.storedWithoutTimeline = storedWithoutTimeline.load(std::memory_order_relaxed);
    target.changesBeforeStored = changesBeforeStored.load(std::memory_order_relaxed);
    target.transcodeAttempts = transcodeAttempts.load(std::memory_order_relaxed);
    target.transcodedWithoutHook = transcodedWithoutHook.load(std::memory_order_relaxed);
    target.answersAcceptingCompression = answersAcceptingCompression.load(std::memory_order_relaxed);
    target.answersWithoutCompression = answersWithoutCompression.load(std::memory_order_relaxed);
    target.firstStartNs = firstStartNs.load(std::memory_order_relaxed);
    target.lastStoredNs = lastStoredNs.load(std::memory_order_relaxed);
  }


  void StreamStats::AddTo(TransportSnapshot& target) const
  {
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      phases[p].AddTo(target.phases[p]);
    }
    receivedBytes.AddTo(target.receivedBytes);
    storedBytes.AddTo(target.storedBytes);
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      target.outcomes[o] += outcomes[o].load(std::memory_order_relaxed);
    }
    target.storedWithoutTimeline += storedWithoutTimeline.load(std::memory_order_relaxed);
    target.changesBeforeStored += changesBeforeStored.load(std::memory_order_relaxed);
    target.transcodeAttempts += transcodeAttempts.load(std::memory_order_relaxed);
    target.transcodedWithoutHook += transcodedWithoutHook.load(std::memory_order_relaxed);
    target.answersAcceptingCompression += answersAcceptingCompression.load(std::memory_order_relaxed);
    target.answersWithoutCompression += answersWithoutCompression.load(std::memory_order_relaxed);
    const int64_t first = firstStartNs.load(std::memory_order_relaxed);
    if (first != 0)
    {
      target.firstStartNs = (target.firstStartNs == 0) ? first : std::min(target.firstStartNs, first);
    }
    target.lastStoredNs = std::max(target.lastStoredNs, lastStoredNs.load(std::memory_order_relaxed));
  }
}
