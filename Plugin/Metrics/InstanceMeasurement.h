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

    std::array<int64_t, kPhaseCount> phaseNs;       // kNotMeasured where the phase was not observed
    std::array<int64_t, kPhaseCount> phaseStartNs;  // monotonic ns; meaningful where phaseNs is measured
    int64_t receivedBytes = kNotMeasured;           // kNotMeasured when ReceivedInstance was not seen
    uint64_t storedBytes = 0;
    bool hasTimeline = false;  // false: OnStored came without any earlier event on its thread
    bool transcodeAttempted = false;
    int64_t startNs = 0;   // first visible event (monotonic ns); OnStored without a timeline
    int64_t storedNs = 0;  // OnStored (monotonic ns)
  };
}
