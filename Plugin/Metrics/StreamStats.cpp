#include "Metrics/StreamStats.h"

#include <algorithm>

namespace IngestPerf
{
  template <typename HistogramKind>
  void StreamFigures<HistogramKind>::RecordStored(const InstanceMeasurement& measurement)
  {
    storedBytes.Record(static_cast<int64_t>(measurement.storedBytes));
    active.Record(measurement.hasTimeline ? measurement.startNs : 0, measurement.storedNs);
    if (!measurement.hasTimeline)
    {
      Count(Counter::StoredWithoutTimeline);
    }
    if (measurement.transcodeAttempted)
    {
      Count(Counter::TranscodeAttempts);
    }
    if (measurement.receivedBytes != InstanceMeasurement::kNotMeasured)
    {
      receivedBytes.Record(measurement.receivedBytes);
    }
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      if (measurement.phaseNs[p] != InstanceMeasurement::kNotMeasured)
      {
        phases[p].Record(measurement.phaseNs[p]);
        if (measurement.phaseCpuNs[p] != InstanceMeasurement::kNotMeasured)
        {
          parts[p].Record(measurement.phaseNs[p], measurement.phaseCpuNs[p], measurement.phaseRunDelayNs[p]);
        }
      }
    }
    // Last, and released: a reader that counts the instance sees all the above.
    outcomes[static_cast<size_t>(Outcome::Stored)].fetch_add(1, std::memory_order_release);
  }


  template <typename HistogramKind>
  void StreamFigures<HistogramKind>::RecordPhaseOf(const InstanceMeasurement& measurement, Phase phase)
  {
    const size_t p = static_cast<size_t>(phase);
    if (measurement.phaseNs[p] == InstanceMeasurement::kNotMeasured)
    {
      return;
    }
    if (measurement.phaseCpuNs[p] != InstanceMeasurement::kNotMeasured)
    {
      parts[p].Record(measurement.phaseNs[p], measurement.phaseCpuNs[p], measurement.phaseRunDelayNs[p]);
    }
    phases[p].Record(measurement.phaseNs[p]);
  }


  template <typename HistogramKind>
  void StreamFigures<HistogramKind>::RecordOutcome(Outcome outcome)
  {
    // Release (the same instruction as relaxed on x86): a reader that counts it sees what was
    // recorded before it in the windows.
    outcomes[static_cast<size_t>(outcome)].fetch_add(1, std::memory_order_release);
  }


  template <typename HistogramKind>
  void StreamFigures<HistogramKind>::RecordPhase(Phase phase, int64_t ns)
  {
    phases[static_cast<size_t>(phase)].Record(ns);
  }


  template <typename HistogramKind>
  void StreamFigures<HistogramKind>::Count(Counter counter)
  {
    counters[static_cast<size_t>(counter)].fetch_add(1, std::memory_order_release);
  }


  template <typename HistogramKind>
  void StreamFigures<HistogramKind>::Reset()
  {
    for (HistogramKind& histogram : phases)
    {
      histogram.Reset();
    }
    for (PhasePartSums& part : parts)
    {
      part.Clear();
    }
    receivedBytes.Reset();
    storedBytes.Reset();
    for (auto& outcome : outcomes)
    {
      outcome.store(0, std::memory_order_relaxed);
    }
    for (auto& counter : counters)
    {
      counter.store(0, std::memory_order_relaxed);
    }
    active.Clear();
  }


  void StreamStats::AddFrom(const StreamStats& other)
  {
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      phases[p].AddFrom(other.phases[p]);
      if (!other.parts[p].IsEmpty())
      {
        parts[p].AddFrom(other.parts[p]);
      }
    }
    receivedBytes.AddFrom(other.receivedBytes);
    storedBytes.AddFrom(other.storedBytes);
    active.Record(other.active.firstStartNs.load(std::memory_order_relaxed),
                  other.active.lastStoredNs.load(std::memory_order_relaxed));
    for (size_t c = 0; c < kCounterCount; c++)
    {
      counters[c].fetch_add(other.counters[c].load(std::memory_order_relaxed), std::memory_order_release);
    }
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      outcomes[o].fetch_add(other.outcomes[o].load(std::memory_order_relaxed), std::memory_order_release);
    }
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
    // A NewInstance change paired after a reset with an instance stored before it records a
    // changeDispatch sample or a counter in a stream that may have no outcome since the reset.
    for (const auto& counter : counters)
    {
      if (counter.load(std::memory_order_relaxed) != 0)
      {
        return false;
      }
    }
    return phases[static_cast<size_t>(Phase::ChangeDispatch)].Count() == 0;
  }


  template <typename HistogramKind>
  void StreamFigures<HistogramKind>::AddTo(TransportSnapshot& target, uint32_t phaseMask, bool withParts,
                                           bool withSizes) const
  {
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      if ((phaseMask >> p) & 1)
      {
        phases[p].AddTo(target.phases[p]);
        if (withParts && !parts[p].IsEmpty())
        {
          parts[p].AddTo(target.PartsToFill(p));
        }
      }
    }
    if (withSizes)
    {
      receivedBytes.AddTo(target.receivedBytes);
      storedBytes.AddTo(target.storedBytes);
    }
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      target.outcomes[o] += outcomes[o].load(std::memory_order_relaxed);
    }
    for (size_t c = 0; c < kCounterCount; c++)
    {
      target.counters[c] += counters[c].load(std::memory_order_relaxed);
    }
    active.AddTo(target);
  }


  template struct StreamFigures<Histogram>;
  template struct StreamFigures<WindowHistogram>;
}
