// What the recorder makes of one stored instance, once (IngestRecorder's Measure): its phase
// durations and starts, and the figures the aggregate counts. The aggregate records it as it is,
// without knowing the timeline it came from. (A "record", in this plugin, is the open entry of an
// instance on its thread's timeline; this is what is measured once it has closed.)
#pragma once

#include "Vocabulary/IngestVocabulary.h"

#include <array>
#include <cstdint>

namespace IngestPerf
{
  struct InstanceMeasurement
  {
    static constexpr int64_t kNotMeasured = -1;

    InstanceMeasurement()
    {
      phaseNs.fill(kNotMeasured);
      phaseStartNs.fill(0);
      phaseCpuNs.fill(kNotMeasured);
      phaseRunDelayNs.fill(kNotMeasured);
    }

    int64_t Phase(IngestPerf::Phase phase) const { return phaseNs[static_cast<size_t>(phase)]; }
    void Set(IngestPerf::Phase phase, int64_t ns) { phaseNs[static_cast<size_t>(phase)] = ns; }
    // The phase's start too, for the readers that place it in time (the recent ring, the trace).
    void Set(IngestPerf::Phase phase, int64_t startNs, int64_t ns)
    {
      phaseStartNs[static_cast<size_t>(phase)] = startNs;
      phaseNs[static_cast<size_t>(phase)] = ns;
    }
    int64_t PhaseStart(IngestPerf::Phase phase) const { return phaseStartNs[static_cast<size_t>(phase)]; }

    // Where a measured phase's time went (for the sampled instances): on a CPU, waiting for one
    // (kNotMeasured when the kernel gives no run delay), and the rest, blocked. The parts add up to
    // the phase's duration: the recorder keeps each within it.
    void SetParts(IngestPerf::Phase phase, int64_t cpuNs, int64_t runDelayNs)
    {
      phaseCpuNs[static_cast<size_t>(phase)] = cpuNs;
      phaseRunDelayNs[static_cast<size_t>(phase)] = runDelayNs;
    }
    bool HasParts(IngestPerf::Phase phase) const
    {
      const size_t p = static_cast<size_t>(phase);
      return phaseNs[p] != kNotMeasured && phaseCpuNs[p] != kNotMeasured;
    }
    int64_t CpuNs(IngestPerf::Phase phase) const { return phaseCpuNs[static_cast<size_t>(phase)]; }
    int64_t RunDelayNs(IngestPerf::Phase phase) const { return phaseRunDelayNs[static_cast<size_t>(phase)]; }
    // The duration less the CPU time and the run delay (when known: else it includes the run delay).
    int64_t BlockedNs(IngestPerf::Phase phase) const
    {
      const size_t p = static_cast<size_t>(phase);
      return phaseNs[p] - phaseCpuNs[p] - (phaseRunDelayNs[p] == kNotMeasured ? 0 : phaseRunDelayNs[p]);
    }

    std::array<int64_t, kPhaseCount> phaseNs;          // kNotMeasured where the phase was not observed
    std::array<int64_t, kPhaseCount> phaseStartNs;     // monotonic ns; meaningful where phaseNs is measured
    std::array<int64_t, kPhaseCount> phaseCpuNs;       // kNotMeasured where the phase was not split
    std::array<int64_t, kPhaseCount> phaseRunDelayNs;  // kNotMeasured where not split, or not known
    int64_t receivedBytes = kNotMeasured;              // kNotMeasured when ReceivedInstance was not seen
    uint64_t storedBytes = 0;
    bool hasTimeline = false;  // false: OnStored came without any earlier event on its thread
    bool transcodeAttempted = false;
    int64_t startNs = 0;   // first visible event (monotonic ns); OnStored without a timeline
    int64_t storedNs = 0;  // OnStored (monotonic ns)
  };
}
