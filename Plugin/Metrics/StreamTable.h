// A fixed pool of labelled streams, found by the packed key of their labels (InstanceLabels). The
// pool is reserved up front in anonymous memory that the kernel backs only when a stream is first
// written, so `MaxStreams` bounds memory without costing it. Lookup is lock-free: hash, linear
// probing over a compact array of keys (8 bytes a slot, apart from the streams themselves), and a
// compare-and-swap to claim an empty slot. Probing stops after kMaxProbe slots, so a full table
// costs a few cache lines, not one per stream; an instance that finds no slot goes to its
// transport's overflow stream, whose labels other than transport are "(other)". A thread
// remembers its last key and where it went, overflow included.
#pragma once

#include "Labels/InstanceLabels.h"
#include "Metrics/StreamStats.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace IngestPerf
{
  class StreamTable
  {
  public:
    explicit StreamTable(size_t capacity);
    ~StreamTable();
    StreamTable(const StreamTable&) = delete;
    StreamTable& operator=(const StreamTable&) = delete;

    static constexpr size_t kMaxProbe = 64;

    StreamStats& FindOrInsert(const InstanceLabels& labels);

    // Every stream in use, overflow streams included.
    void ForEach(const std::function<void(const InstanceLabels&, const StreamStats&)>& visit) const;

    // The label values aged out (LabelCatalog::Rotate): every label combination's stream, unless
    // `keep` says its values were kept, is added to its transport's overflow stream, whose labels
    // are "(other)", and its slot freed for the combinations to come; the sums since the reset stay
    // exact. A thread's remembered stream is forgotten. Returns how many streams were folded (also
    // counted in Folded()).
    size_t FoldIntoOverflow(const std::function<bool(const InstanceLabels&)>& keep = nullptr);

    // POST /perf/reset: every stream emptied and its slot freed for the label combinations to come
    // (a thread's remembered stream is forgotten with it).
    void ResetAll();

    size_t Capacity() const { return capacity_; }
    size_t Used() const;
    uint64_t Overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
    uint64_t Folded() const { return folded_.load(std::memory_order_relaxed); }
    static size_t BytesPerStream();

  private:
    StreamStats& StatsAt(size_t index) const;

    size_t capacity_;
    size_t slotCount_;
    size_t bytes_;
    void* memory_;
    std::atomic<uint64_t>* keys_;  // slotCount_ keys, then slotCount_ streams, in memory_
    std::atomic<uint64_t> id_;     // renewed by ResetAll: the threads' remembered streams are then stale
    std::atomic<uint64_t> overflowed_;
    std::atomic<uint64_t> folded_;  // since the reset
  };
}
