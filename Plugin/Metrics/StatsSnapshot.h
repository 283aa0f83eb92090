// A consistent-enough, plain copy of the aggregate, made by a reader. Everything the exporters
// need and nothing they could use to reach back into the hot path.
#pragma once

#include "Vocabulary/IngestVocabulary.h"
#include "Metrics/Histogram.h"
#include "Metrics/PhaseParts.h"

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  // The plain counters of a stream, defined once: StreamStats keeps them as atomics, snapshots as
  // integers, and every copy, merge and reset loops over this list.
  enum class Counter
  {
    StoredWithoutTimeline,        // OnStored without any earlier event on its thread
    ChangesBeforeStored,          // NewInstance change delivered before OnStored returned
    TranscodeAttempts,            // instances whose transcoder callback ran
    TranscodedWithoutHook,        // stored in another syntax by a transcoder that ran before ours
    AnswersAcceptingCompression,  // HTTP requests whose client accepts gzip/deflate
    AnswersWithoutCompression,
    // Failed stores, one counter per FailureReason, in its order (FailureCounter).
    FailedBeforeFilters,
    FailedAfterFilters,
    FailedDiskFull,
    FailedQuota,
    FailedStorageWrite,
    FailedIndex,
    Count
  };
  constexpr size_t kCounterCount = static_cast<size_t>(Counter::Count);
  static_assert(static_cast<size_t>(Counter::FailedIndex) - static_cast<size_t>(Counter::FailedBeforeFilters) + 1 ==
                  kFailureReasonCount,
                "one counter per FailureReason");

  constexpr Counter FailureCounter(FailureReason reason)
  {
    return static_cast<Counter>(static_cast<size_t>(Counter::FailedBeforeFilters) + static_cast<size_t>(reason));
  }

  struct TransportSnapshot
  {
    std::array<HistogramSnapshot, kPhaseCount> phases;
    // Each phase's time on a CPU, waiting for one and blocked, over the instances that had it split:
    // kPhaseCount entries on the heap once one phase has some, none before (a report holds about 20
    // TransportSnapshots, on the small stacks of Orthanc's HTTP threads). Read with PartsOf.
    std::vector<PhasePartsSnapshot> parts;
    HistogramSnapshot receivedBytes;
    HistogramSnapshot storedBytes;
    std::array<uint64_t, kOutcomeCount> outcomes{};
    std::array<uint64_t, kCounterCount> counters{};
    int64_t firstStartNs = 0;  // 0 when nothing was stored since the reset
    int64_t lastStoredNs = 0;
    uint64_t last10sInstances = 0;
    uint64_t last10sBytes = 0;
    uint64_t last60sInstances = 0;
    uint64_t last60sBytes = 0;

    uint64_t Count(Counter counter) const { return counters[static_cast<size_t>(counter)]; }
    const PhasePartsSnapshot& PartsOf(Phase phase) const;
    // The entry of phase `p`, made with the others on first use.
    PhasePartsSnapshot& PartsToFill(size_t p);
    uint64_t Failures(FailureReason reason) const { return Count(FailureCounter(reason)); }

    void Merge(const TransportSnapshot& other);

    // From the first instance's start to the last OnStored since the reset; 0 if none.
    int64_t ActiveSpanNs() const;
  };

  // The transports merged into one: what "all" shows.
  TransportSnapshot MergeTransports(const std::array<TransportSnapshot, kTransportCount>& transports);

  // The labelled streams a query matched, merged per transport and per value of one label.
  struct GroupedSnapshot
  {
    size_t streamsMatched = 0;
    std::array<TransportSnapshot, kTransportCount> transports;
    std::vector<std::pair<uint8_t, TransportSnapshot>> groups;  // label id -> merged streams
    // From the ring of recent instances (a window with labels or groupBy: GroupRecentInstances):
    // the name of each group (groups' ids are then their index), and how much of the window the
    // ring held: all of it, or what was stored from recentFromNs (monotonic).
    bool fromRecent = false;
    std::vector<std::string> groupNames;
    bool recentComplete = true;
    int64_t recentFromNs = 0;
    uint64_t recentMatched = 0;  // the ring's instances in the window that matched the query
    size_t recentCapacity = 0;   // IngestPerf.RecentInstances
    uint64_t recentSkipped = 0;  // records a writer gave up (RecentSnapshot::skipped)
  };

  // What was stored since the reset, for an idle window to say that it is idle, not empty.
  struct SinceReset
  {
    int64_t sinceWallNs = 0;        // the reset (or the plugin's start), UTC epoch ns
    int64_t nowWallNs = 0;          // when the snapshot was taken
    uint64_t stored = 0;            // every transport
    int64_t firstStoredWallNs = 0;  // 0: none
    int64_t lastStoredWallNs = 0;
  };

  struct StatsSnapshot
  {
    std::array<TransportSnapshot, kTransportCount> transports;
    uint64_t callbackErrors = 0;
    uint64_t sdkCallsFailed = 0;
    uint64_t concludedEarly = 0;   // stores concluded as ended that reached OnStored after all
    uint64_t storedQueueFull = 0;  // stored instances recorded on Orthanc's thread (the queue was full)
    int64_t takenNs = 0;
    int64_t resetNs = 0;
    int64_t resetWallNs = 0;
    // OnStored of the first and last instance stored since the reset (monotonic; 0: none yet).
    int64_t firstStoredNs = 0;
    int64_t lastStoredNs = 0;

    // A monotonic time of this snapshot's clock as UTC epoch ns, by the reset's two readings.
    int64_t WallNs(int64_t monotonicNs) const { return resetWallNs + (monotonicNs - resetNs); }
    // The quantiles of each part of each phase, per transport ([transport * kPhaseCount + phase]), on
    // the heap; empty where not taken.
    std::vector<PhasePartQuantiles> partQuantiles;

    TransportSnapshot AllTransports() const;  // MergeTransports(transports)
    SinceReset History() const;
    // The kPhaseCount quantiles of `transport`'s phases, nullptr when not taken.
    const PhasePartQuantiles* PartQuantilesOf(Transport transport) const
    {
      return partQuantiles.empty() ? nullptr : partQuantiles.data() + static_cast<size_t>(transport) * kPhaseCount;
    }
  };
}
