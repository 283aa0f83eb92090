#include "Metrics/PhaseParts.h"

#include <algorithm>

namespace IngestPerf
{
  void PhasePartsSnapshot::Merge(const PhasePartsSnapshot& other)
  {
    sampled += other.sampled;
    durationNs += other.durationNs;
    cpuNs += other.cpuNs;
    runDelayNs += other.runDelayNs;
    runDelaySampled += other.runDelaySampled;
  }


  void PhasePartSums::Record(int64_t duration, int64_t cpu, int64_t runDelay)
  {
    sampled.fetch_add(1, std::memory_order_relaxed);
    durationNs.fetch_add(static_cast<uint64_t>(duration), std::memory_order_relaxed);
    cpuNs.fetch_add(static_cast<uint64_t>(cpu), std::memory_order_relaxed);
    if (runDelay >= 0)
    {
      runDelayNs.fetch_add(static_cast<uint64_t>(runDelay), std::memory_order_relaxed);
      runDelaySampled.fetch_add(1, std::memory_order_relaxed);
    }
  }


  void PhasePartSums::AddTo(PhasePartsSnapshot& target) const
  {
    // A reader may see a sample's count without all its sums: each part stays within the duration.
    const uint64_t duration = durationNs.load(std::memory_order_relaxed);
    const uint64_t cpu = std::min(cpuNs.load(std::memory_order_relaxed), duration);
    target.sampled += sampled.load(std::memory_order_relaxed);
    target.durationNs += duration;
    target.cpuNs += cpu;
    target.runDelayNs += std::min(runDelayNs.load(std::memory_order_relaxed), duration - cpu);
    target.runDelaySampled += runDelaySampled.load(std::memory_order_relaxed);
  }


  void PhasePartSums::AddFrom(const PhasePartSums& other)
  {
    for (auto field : {&PhasePartSums::durationNs, &PhasePartSums::cpuNs, &PhasePartSums::runDelayNs,
                       &PhasePartSums::runDelaySampled, &PhasePartSums::sampled})
    {
      (this->*field).fetch_add((other.*field).load(std::memory_order_relaxed), std::memory_order_relaxed);
    }
  }


  void PhasePartSums::Clear()
  {
    // Every field, each only if it is not zero already: an untouched page stays untouched, and the
    // sums of a record that raced the last clear (its count cleared, its sums after) go too.
    for (auto field : {&PhasePartSums::sampled, &PhasePartSums::durationNs, &PhasePartSums::cpuNs,
                       &PhasePartSums::runDelayNs, &PhasePartSums::runDelaySampled})
    {
      if ((this->*field).load(std::memory_order_relaxed) != 0)
      {
        (this->*field).store(0, std::memory_order_relaxed);
      }
    }
  }


  void PhasePartHistograms::Record(int64_t duration, int64_t cpu, int64_t runDelay)
  {
    onCpu.Record(cpu);
    if (runDelay >= 0)
    {
      waitingForCpu.Record(runDelay);
    }
    blocked.Record(duration - cpu - (runDelay >= 0 ? runDelay : 0));
  }


  void PhasePartHistograms::AddTo(PhasePartQuantiles& target) const
  {
    onCpu.AddTo(target.onCpu);
    waitingForCpu.AddTo(target.waitingForCpu);
    blocked.AddTo(target.blocked);
  }


  void PhasePartHistograms::Clear()
  {
    onCpu.Reset();
    waitingForCpu.Reset();
    blocked.Reset();
  }
}
