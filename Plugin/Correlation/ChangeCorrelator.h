// Pairs the OnStored of an instance with its NewInstance change, which Orthanc delivers later
// (or, rarely, earlier) on its single change thread. A fixed table indexed by a hash of the
// Orthanc instance id; an entry is overwritten by a newer instance with the same index, so memory
// is bounded and an unpaired entry never leaks. The table describes Orthanc, not statistics, so
// POST /perf/reset leaves it alone. Each entry has a spin lock held for a few nanoseconds; the
// change of an instance often arrives while its OnStored runs, so a busy entry is retried a
// bounded number of times, then skipped and counted, never waited for indefinitely.
#pragma once


#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace IngestPerf
{
  class ChangeCorrelator
  {
  public:
    struct Pairing
    {
      bool paired;
      uint64_t labelsKey;  // InstanceLabels::Key() of the stored instance
      int64_t lagNs;       // change time minus OnStored time; negative when the change came first
    };

    explicit ChangeCorrelator(size_t entries);
    ~ChangeCorrelator();

    // What the table knows of earlier stores of an instance whose ingest started at `startNs`.
    struct Earlier
    {
      // Another store of it reached OnStored at or after `startNs`, while this one was being
      // ingested: of two stores that race, Orthanc stores one and answers the other AlreadyStored,
      // whichever of their OnStored comes first.
      bool storedDuring = false;
      // A NewInstance change for it was delivered before `startNs`: it belongs to an earlier store of
      // the same instance, at changeNs.
      bool changeBefore = false;
      int64_t changeNs = 0;
      // Another store of it reached OnStored before `startNs`, at storedNs (and no deletion of it
      // was delivered since).
      bool storedBefore = false;
      int64_t storedNs = 0;
    };
    Earlier EarlierStores(uint64_t key, int64_t startNs);

    Pairing Stored(uint64_t key, int64_t storedNs, uint64_t labelsKey);
    Pairing NewInstanceChange(uint64_t key, int64_t changeNs);

    // A "Deleted" change for the instance: its earlier store no longer makes a re-send a duplicate.
    void InstanceDeleted(uint64_t key);

    size_t Capacity() const { return capacity_; }
    uint64_t Skipped() const { return skipped_.load(std::memory_order_relaxed); }
    // Entries still waiting for their pair (an OnStored without its change, or the reverse) that
    // another instance took over: the table was too small for the instances in flight.
    uint64_t Evicted() const { return evicted_.load(std::memory_order_relaxed); }

  private:
    struct Entry;
    Entry* Lock(uint64_t key);
    static void Unlock(Entry* entry);
    void CountEviction(const Entry& entry, uint64_t key);

    size_t capacity_;
    std::unique_ptr<Entry[]> entries_;
    std::atomic<uint64_t> skipped_;
    std::atomic<uint64_t> evicted_;
  };
}
