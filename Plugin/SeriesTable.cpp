#include "SeriesTable.h"

#include <sys/mman.h>

#include <new>

namespace IngestPerf
{
  struct SeriesTable::Slot
  {
    std::atomic<uint64_t> key;
    SeriesStats stats;
  };


  namespace
  {
    std::atomic<uint64_t> nextTableId{1};

    // The last series this thread used: consecutive instances of one thread nearly always share
    // their labels. Keyed by table id, never by address, so a destroyed table is never reached.
    struct LastSeries
    {
      uint64_t tableId = 0;
      uint64_t key = 0;
      SeriesStats* stats = nullptr;
    };

    thread_local LastSeries lastSeries;

    uint64_t Mix(uint64_t key)
    {
      key ^= key >> 33;
      key *= 0xff51afd7ed558ccdull;
      key ^= key >> 33;
      return key;
    }
  }


  SeriesTable::SeriesTable(size_t capacity) :
    capacity_(capacity == 0 ? 1 : capacity),
    slotCount_(capacity_ + kTransportCount),
    bytes_(slotCount_ * sizeof(Slot)),
    memory_(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)),
    id_(nextTableId.fetch_add(1)),
    overflowed_(0)
  {
    if (memory_ == MAP_FAILED)
    {
      throw std::bad_alloc();
    }
    // Zero-filled pages are valid empty slots (implicit-lifetime types only): construct nothing.
    for (size_t t = 0; t < kTransportCount; t++)
    {
      InstanceLabels overflow;
      overflow.ids.fill(kOtherLabel);
      overflow.SetTransport(static_cast<Transport>(t));
      SlotAt(capacity_ + t).key.store(overflow.Key(), std::memory_order_relaxed);
    }
  }


  SeriesTable::~SeriesTable()
  {
    munmap(memory_, bytes_);
  }


  SeriesTable::Slot& SeriesTable::SlotAt(size_t index) const
  {
    return static_cast<Slot*>(memory_)[index];
  }


  size_t SeriesTable::BytesPerSeries()
  {
    return sizeof(Slot);
  }


  SeriesStats& SeriesTable::FindOrInsert(const InstanceLabels& labels)
  {
    const uint64_t key = labels.Key();
    LastSeries& last = lastSeries;
    if (last.tableId == id_ && last.key == key)
    {
      return *last.stats;
    }

    const size_t start = Mix(key) % capacity_;
    for (size_t probe = 0; probe < capacity_; probe++)
    {
      Slot& slot = SlotAt((start + probe) % capacity_);
      uint64_t current = slot.key.load(std::memory_order_acquire);
      if (current == 0 && slot.key.compare_exchange_strong(current, key, std::memory_order_acq_rel))
      {
        current = key;
      }
      if (current == key)
      {
        last = LastSeries{id_, key, &slot.stats};
        return slot.stats;
      }
    }
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    return SlotAt(capacity_ + static_cast<size_t>(labels.GetTransport())).stats;
  }


  void SeriesTable::ForEach(const std::function<void(const InstanceLabels&, const SeriesStats&)>& visit) const
  {
    for (size_t index = 0; index < slotCount_; index++)
    {
      const Slot& slot = SlotAt(index);
      const uint64_t key = slot.key.load(std::memory_order_acquire);
      if (key == 0)
      {
        continue;
      }
      if (slot.stats.IsEmpty())
      {
        continue;  // claimed but nothing since the last reset, or an unused overflow series
      }
      visit(InstanceLabels::FromKey(key), slot.stats);
    }
  }


  void SeriesTable::ResetAll()
  {
    // Slots keep their labels: only the series in use are touched.
    for (size_t index = 0; index < slotCount_; index++)
    {
      Slot& slot = SlotAt(index);
      if (slot.key.load(std::memory_order_acquire) == 0 || slot.stats.IsEmpty())
      {
        continue;  // untouched memory stays untouched
      }
      slot.stats.Reset();
    }
    overflowed_.store(0, std::memory_order_relaxed);
  }


  size_t SeriesTable::Used() const
  {
    size_t used = 0;
    for (size_t index = 0; index < capacity_; index++)
    {
      used += SlotAt(index).key.load(std::memory_order_relaxed) != 0 ? 1 : 0;
    }
    return used;
  }
}
