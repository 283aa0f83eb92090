// The figures of a stream of instances: one histogram per phase, instance sizes, outcomes, the
// counters of StatsSnapshot.h and the active span. StreamStats keeps them for one label set in
// Histograms; a slot of the time windows (TimeWindows) in WindowHistograms. Records an
// InstanceMeasurement as the recorder made it, without knowing the timeline it came from. All-zero
// memory is a valid empty one and the default constructor writes nothing (see Histogram), so pools
// of them can live in lazily mapped memory.
#pragma once

#include "Metrics/ActiveSpan.h"
#include "Metrics/Histogram.h"
#include "Vocabulary/IngestVocabulary.h"
#include "Metrics/InstanceMeasurement.h"
#include "Metrics/PhaseParts.h"
#include "Metrics/StatsSnapshot.h"
#include "Metrics/WindowHistogram.h"

#include <array>
#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  template <typename HistogramKind>
  struct StreamFigures
  {
    std::array<HistogramKind, kPhaseCount> phases;
    std::array<PhasePartSums, kPhaseCount> parts;  // the sampled instances' split of each phase
    HistogramKind receivedBytes;
    HistogramKind storedBytes;
    std::array<std::atomic<uint64_t>, kOutcomeCount> outcomes;
    std::array<std::atomic<uint64_t>, kCounterCount> counters;
    ActiveSpan active;

    void RecordStored(const InstanceMeasurement& measurement);
    void RecordOutcome(Outcome outcome);
    // One sample of a phase that is not in the instance's InstanceMeasurement (changeDispatch).
    void RecordPhase(Phase phase, int64_t ns);
    // One phase of an instance's measurement, with its parts if it was split (the gaps before a
    // duplicate, whose other phases are not counted).
    void RecordPhaseOf(const InstanceMeasurement& measurement, Phase phase);
    void Count(Counter counter);

    // Zeroes everything; the histograms and the parts write only what is not zero already, so their
    // untouched pages stay untouched.
    void Reset();
    // Adds everything but the rate windows (a merge without an intermediate copy); of the phases,
    // those of `phases` (bit p: Phase p) only, with their parts unless `withParts` is false; the
    // sizes unless `withSizes` is false.
    void AddTo(TransportSnapshot& target, uint32_t phases = ~uint32_t(0), bool withParts = true,
               bool withSizes = true) const;
  };

  extern template struct StreamFigures<Histogram>;
  extern template struct StreamFigures<WindowHistogram>;

  // One label set's stream.
  struct StreamStats : StreamFigures<Histogram>
  {
    // Adds everything `other` holds (its labels aged out: StreamTable::FoldIntoOverflow).
    void AddFrom(const StreamStats& other);
    // Nothing recorded since the last reset: no outcome (every instance counts one), no counter,
    // no changeDispatch sample (a change can pair after a reset with an instance stored before it).
    bool IsEmpty() const;
  };
}
