#include "Metrics/StreamTable.h"

#include <sys/mman.h>

#include <new>

namespace IngestPerf
{
  namespace
  {
    std::atomic<uint64_t> nextTableId{1};

    // The last stream this thread used: consecutive instances of one thread nearly always share
    // their labels. Keyed by table id, never by address, so a destroyed table is never reached.
    struct LastStream
    {
      uint64_t tableId = 0;
      uint64_t key = 0;
      StreamStats* stats = nullptr;
      bool overflow = false;  // stats is the transport's overflow stream
    };

    thread_local LastStream lastStream;

    size_t KeyBytes(size_t slots)
    {
      // The streams start on their own cache line.
      return (slots * sizeof(std::atomic<uint64_t>) + 63) / 64 * 64;
    }

    uint64_t Mix(uint64_t key)
    {
      key ^= key >> 33;
      key *= 0xff51afd7ed558ccdull;
      key ^= key >> 33;
      return key;
    }
  }


  StreamTable::StreamTable(size_t capacity) :
    capacity_(capacity == 0 ? 1 : capacity),
    slotCount_(capacity_ + kTransportCount),
    bytes_(KeyBytes(slotCount_) + slotCount_ * sizeof(StreamStats)),
    memory_(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)),
    keys_(static_cast<std::atomic<uint64_t>*>(memory_)),
    id_(nextTableId.fetch_add(1)),
    overflowed_(0),
    folded_(0)
  {
    if (memory_ == MAP_FAILED)
    {
      throw std::bad_alloc();
    }
    // Zero-filled pages are valid empty slots (implicit-lifetime types only): construct nothing.
    for (size_t t = 0; t < kTransportCount; t++)
    {
      keys_[capacity_ + t].store(InstanceLabels::Overflow(static_cast<Transport>(t)).Key(), std::memory_order_relaxed);
    }
  }


  StreamTable::~StreamTable()
  {
    munmap(memory_, bytes_);
  }


  static_assert(alignof(StreamStats) <= 64, "streams are placed at a cache-line boundary after the keys");


  StreamStats& StreamTable::StatsAt(size_t index) const
  {
    return reinterpret_cast<StreamStats*>(static_cast<char*>(memory_) + KeyBytes(slotCount_))[index];
  }


  size_t StreamTable::BytesPerStream()
  {
    return sizeof(StreamStats) + sizeof(std::atomic<uint64_t>);
  }


  StreamStats& StreamTable::FindOrInsert(const InstanceLabels& labels)
  {
    const uint64_t key = labels.Key();
    const uint64_t id = id_.load(std::memory_order_acquire);
    LastStream& last = lastStream;
    if (last.tableId == id && last.key == key)
    {
      if (last.overflow)
      {
        overflowed_.fetch_add(1, std::memory_order_relaxed);  // counts instances, not lookups
      }
      return *last.stats;
    }

    const size_t transport = static_cast<size_t>(labels.GetTransport());
    if (key == keys_[capacity_ + transport].load(std::memory_order_relaxed))
    {
      // Every label "(other)": the transport's overflow stream (labels that aged out), never a second
      // stream of the same labels.
      last = LastStream{id, key, &StatsAt(capacity_ + transport), false};
      return *last.stats;
    }
    const size_t start = Mix(key) % capacity_;
    const size_t probes = capacity_ < kMaxProbe ? capacity_ : kMaxProbe;
    for (size_t probe = 0; probe < probes; probe++)
    {
      const size_t index = (start + probe) % capacity_;
      uint64_t current = keys_[index].load(std::memory_order_acquire);
      if (current == 0 && keys_[index].compare_exchange_strong(current, key, std::memory_order_acq_rel))
      {
        current = key;
      }
      if (current == key)
      {
        last = LastStream{id, key, &StatsAt(index), false};
        return *last.stats;
      }
    }
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    StreamStats& overflow = StatsAt(capacity_ + static_cast<size_t>(labels.GetTransport()));
    // Slots are released only by a reset: until then this key overflows.
    last = LastStream{id, key, &overflow, true};
    return overflow;
  }


  void StreamTable::ForEach(const std::function<void(const InstanceLabels&, const StreamStats&)>& visit) const
  {
    for (size_t index = 0; index < slotCount_; index++)
    {
      const uint64_t key = keys_[index].load(std::memory_order_acquire);
      if (key == 0)
      {
        continue;
      }
      const StreamStats& stats = StatsAt(index);
      if (stats.IsEmpty())
      {
        continue;  // claimed but nothing since the last reset, or an unused overflow stream
      }
      visit(InstanceLabels::FromKey(key), stats);
    }
  }


  size_t StreamTable::FoldIntoOverflow(const std::function<bool(const InstanceLabels&)>& keep)
  {
    // First: a thread that looks a stream up from now on probes the table again.
    id_.store(nextTableId.fetch_add(1), std::memory_order_release);
    size_t folded = 0;
    for (size_t index = 0; index < capacity_; index++)
    {
      const uint64_t key = keys_[index].load(std::memory_order_acquire);
      if (key == 0 || (keep && keep(InstanceLabels::FromKey(key))))
      {
        continue;
      }
      StreamStats& stats = StatsAt(index);
      if (!stats.IsEmpty())
      {
        StatsAt(capacity_ + static_cast<size_t>(InstanceLabels::FromKey(key).GetTransport())).AddFrom(stats);
        stats.Reset();
      }
      keys_[index].store(0, std::memory_order_release);
      folded++;
    }
    folded_.fetch_add(folded, std::memory_order_relaxed);
    return folded;
  }


  void StreamTable::ResetAll()
  {
    id_.store(nextTableId.fetch_add(1), std::memory_order_release);
    // Only the streams in use are touched: untouched memory stays untouched. The label combinations'
    // slots are freed (the label values are forgotten too: LabelCatalog::Clear); the overflow
    // streams keep theirs.
    for (size_t index = 0; index < slotCount_; index++)
    {
      if (keys_[index].load(std::memory_order_acquire) == 0)
      {
        continue;
      }
      StreamStats& stats = StatsAt(index);
      if (!stats.IsEmpty())
      {
        stats.Reset();
      }
      if (index < capacity_)
      {
        keys_[index].store(0, std::memory_order_release);
      }
    }
    overflowed_.store(0, std::memory_order_relaxed);
    folded_.store(0, std::memory_order_relaxed);
  }


  size_t StreamTable::Used() const
  {
    size_t used = 0;
    for (size_t index = 0; index < capacity_; index++)
    {
      used += keys_[index].load(std::memory_order_relaxed) != 0 ? 1 : 0;
    }
    return used;
  }
}
