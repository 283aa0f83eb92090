// The most recent instances, each with its whole timeline, in a ring of fixed size
// (IngestPerf.RecentInstances): what /perf/slowest ranks and /perf/trace draws. Writers (the
// recorder, once per instance, on the ingesting thread) claim a slot with one fetch_add and
// publish it seqlock-style: no allocation, no lock, no waiting. Readers copy every slot and keep
// the consistent ones; a slot being written, or rewritten during the copy, is skipped.
#pragma once

#include "Labels/InstanceLabels.h"
#include "Metrics/InstanceMeasurement.h"
#include "Platform/Configuration.h"
#include "Platform/MappedAllocator.h"
#include "Vocabulary/IngestVocabulary.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace IngestPerf
{
  // Orthanc's instance IDs are 44 characters (a SHA-1 in five groups); longer ones are cut.
  constexpr size_t kMaxInstanceIdLength = 47;

  struct RecentInstance
  {
    InstanceMeasurement measurement;  // durations and starts (monotonic ns) of every phase measured
    int64_t startWallNs;              // wall clock (UTC epoch ns) at measurement.startNs
    InstanceLabels labels;
    Outcome outcome;
    uint32_t thread;  // CurrentThreadNumber() of the ingesting thread
    char instanceId[kMaxInstanceIdLength + 1];
    uint64_t sequence;  // set by the ring: the order of arrival, from 0 (since the last reset)
  };

  // Fills `target` from borrowed values without allocating (instanceId: nullptr or cut).
  void FillRecentInstance(RecentInstance& target, const InstanceMeasurement& measurement, int64_t startWallNs,
                          const InstanceLabels& labels, Outcome outcome, uint32_t thread, const char* instanceId);

  // Up to a whole ring of records (1.2 MB for the default 4096): pages of their own (MappedAllocator).
  using RecentInstanceList = std::vector<RecentInstance, MappedAllocator<RecentInstance>>;

  struct RecentSnapshot
  {
    RecentInstanceList instances;  // stored at or after `sinceNs`, oldest first
    size_t capacity = 0;
    uint64_t pushed = 0;         // since the last reset
    uint64_t held = 0;           // consistent records in the ring, whatever their time
    int64_t oldestStoredNs = 0;  // the oldest of them (monotonic), 0 when none: how far back the ring reaches
    uint64_t skipped = 0;        // records a writer gave up: its slot was being written by another one
  };

  class RecentInstances
  {
  public:
    static constexpr size_t kMinCapacity = kMinRecentInstances;
    static constexpr size_t kMaxCapacity = kMaxRecentInstances;

    explicit RecentInstances(size_t capacity);
    ~RecentInstances();

    // Hot path: one fetch_add, one compare-exchange, plain-sized relaxed stores.
    void Push(const RecentInstance& instance);

    // The records stored (record.storedNs) at or after sinceNs. Changes nothing.
    RecentSnapshot Snapshot(int64_t sinceNs) const;

    // POST /perf/reset: what was pushed before is no longer shown.
    void Reset();

    size_t Capacity() const { return capacity_; }
    static size_t BytesPerRecord();

  private:
    struct Slot;

    size_t capacity_;
    std::unique_ptr<Slot[]> slots_;
    std::atomic<uint64_t> next_;
    std::atomic<uint64_t> resetAt_;
    std::atomic<uint64_t> skipped_;
  };

  // The `n` instances with the longest `phase`, longest first (ties: the most recent first);
  // instances without that phase are left out.
  RecentInstanceList SelectSlowest(RecentInstanceList instances, Phase phase, size_t n);
}
