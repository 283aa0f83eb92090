// A fixed pool of labelled series, found by the packed key of their labels (InstanceLabels). The
// pool is reserved up front in anonymous memory that the kernel backs only when a series is first
// written, so `MaxSeries` bounds memory without costing it. Lookup is lock-free: hash, linear
// probing, and a compare-and-swap to claim an empty slot. When the pool is full, an instance goes
// to its transport's overflow series, whose labels other than transport are "(other)".
#pragma once

#include "InstanceLabels.h"
#include "SeriesStats.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace IngestPerf
{
  class SeriesTable
  {
  public:
    explicit SeriesTable(size_t capacity);
    ~SeriesTable();
    SeriesTable(const SeriesTable&) = delete;
    SeriesTable& operator=(const SeriesTable&) = delete;

    SeriesStats& FindOrInsert(const InstanceLabels& labels);

    // Every series in use, overflow series included.
    void ForEach(const std::function<void(const InstanceLabels&, const SeriesStats&)>& visit) const;

    void ResetAll();

    size_t Capacity() const { return capacity_; }
    size_t Used() const;
    uint64_t Overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
    static size_t BytesPerSeries();

  private:
    struct Slot;

    Slot& SlotAt(size_t index) const;

    size_t capacity_;
    size_t slotCount_;
    size_t bytes_;
    void* memory_;
    uint64_t id_;
    std::atomic<uint64_t> overflowed_;
  };
}
