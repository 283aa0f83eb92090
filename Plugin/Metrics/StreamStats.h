// The statistics of one stream of instances: one histogram per phase, instance sizes, outcome
// counters and the active span. Used for each transport and for each labelled series. All-zero
// memory is a valid empty StreamStats and the default constructor writes nothing (see
// Histogram), so pools of them can live in lazily mapped memory.
#pragma once

#include "Metrics/IngestVocabulary.h"
#include "Metrics/Histogram.h"
#include "Metrics/StatsSnapshot.h"

#include <array>
#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  struct CompletedInstance;

  struct StreamStats
  {
    std::array<Histogram, kPhaseCount> phases;
    Histogram receivedBytes;
    Histogram storedBytes;
    std::array<std::atomic<uint64_t>, kOutcomeCount> outcomes;
    std::atomic<uint64_t> storedWithoutTimeline;
    std::atomic<uint64_t> changesBeforeStored;
    std::atomic<uint64_t> transcodeAttempts;
    std::atomic<uint64_t> transcodedWithoutHook;
    std::atomic<uint64_t> answersAcceptingCompression;  // HTTP requests whose client accepts gzip/deflate
    std::atomic<uint64_t> answersWithoutCompression;
    std::atomic<int64_t> firstStartNs;
    std::atomic<int64_t> lastStoredNs;

    // associationGapNs: -1 when not measured
    void RecordStored(const CompletedInstance& instance, int64_t associationGapNs);
    void RecordOutcome(Outcome outcome);
    void RecordChangeDispatch(int64_t lagNs);
    void RecordChangeBeforeStored();
    void RecordTranscodedWithoutHook();
    void RecordHttpAnswer(bool clientAcceptsCompression);

    void Reset();
    // Nothing recorded since the last reset (every instance counts one outcome).
    bool IsEmpty() const;
    // Fills everything but the rate windows.
    void CopyTo(TransportSnapshot& target) const;
    // Adds everything but the rate windows (a merge without an intermediate copy).
    void AddTo(TransportSnapshot& target) const;
  };
}
