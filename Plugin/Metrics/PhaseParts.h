// Where the time of a phase went, over the instances whose phases were split (one in
// PhasePartsSampling on each thread): on a CPU, waiting for one, blocked. Kept as sums, so that
// the three means add up to the mean duration of those instances, per labelled stream and per time
// slot (PhasePartSums); and as coarse histograms of each part per transport since the reset, for
// its quantiles (PhasePartHistograms). All-zero memory is a valid empty one of each (lazily backed
// pools), and every write is a relaxed atomic addition. The snapshot of the sums is a few numbers
// (TransportSnapshots live on the stack of Orthanc's HTTP threads, 100 KiB under civetweb): the
// quantiles' snapshots are apart, on the heap (StatsSnapshot::partQuantiles).
#pragma once

#include "Metrics/Histogram.h"
#include "Metrics/WindowHistogram.h"

#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  // The parts of one phase, in a snapshot: sums over the split instances.
  struct PhasePartsSnapshot
  {
    uint64_t sampled = 0;  // instances whose phase was split
    uint64_t durationNs = 0;
    uint64_t cpuNs = 0;
    uint64_t runDelayNs = 0;
    uint64_t runDelaySampled = 0;  // of them, those whose run delay the kernel gave

    // The duration less the other parts (includes the run delay where it was not known).
    uint64_t BlockedNs() const { return durationNs - cpuNs - runDelayNs; }
    void Merge(const PhasePartsSnapshot& other);
  };

  // The quantiles of each part of one phase of one transport, since the reset.
  struct PhasePartQuantiles
  {
    HistogramSnapshot onCpu;
    HistogramSnapshot waitingForCpu;
    HistogramSnapshot blocked;
  };

  struct PhasePartSums
  {
    std::atomic<uint64_t> sampled;
    std::atomic<uint64_t> durationNs;
    std::atomic<uint64_t> cpuNs;
    std::atomic<uint64_t> runDelayNs;
    std::atomic<uint64_t> runDelaySampled;

    // runDelayNs < 0: not known (counted in blocked).
    void Record(int64_t durationNs, int64_t cpuNs, int64_t runDelayNs);
    void AddTo(PhasePartsSnapshot& target) const;
    void AddFrom(const PhasePartSums& other);
    void Clear();  // writes only the fields that are not zero
    bool IsEmpty() const { return sampled.load(std::memory_order_relaxed) == 0; }
  };

  struct PhasePartHistograms
  {
    WindowHistogram onCpu;
    WindowHistogram waitingForCpu;  // only the instances whose run delay is known
    WindowHistogram blocked;

    void Record(int64_t durationNs, int64_t cpuNs, int64_t runDelayNs);
    void AddTo(PhasePartQuantiles& target) const;
    void Clear();
  };
}
