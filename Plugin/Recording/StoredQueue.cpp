#include "Recording/StoredQueue.h"

namespace IngestPerf
{
  StoredQueue::StoredQueue(size_t capacity)
  {
    size_t size = 2;
    while (size < capacity)
    {
      size *= 2;
    }
    mask_ = size - 1;
    slots_.reset(new Slot[size]);
    for (size_t i = 0; i < size; i++)
    {
      slots_[i].sequence.store(i, std::memory_order_relaxed);
    }
  }


  bool StoredQueue::Push(const StoredEntry& entry, size_t& pushed)
  {
    size_t position = enqueue_.load(std::memory_order_relaxed);
    for (;;)
    {
      Slot& slot = slots_[position & mask_];
      const size_t sequence = slot.sequence.load(std::memory_order_acquire);
      const intptr_t difference = static_cast<intptr_t>(sequence) - static_cast<intptr_t>(position);
      if (difference == 0)
      {
        if (enqueue_.compare_exchange_weak(position, position + 1, std::memory_order_relaxed))
        {
          slot.entry = entry;
          slot.sequence.store(position + 1, std::memory_order_release);
          pushed = position;
          return true;
        }
      }
      else if (difference < 0)
      {
        return false;  // full
      }
      else
      {
        position = enqueue_.load(std::memory_order_relaxed);
      }
    }
  }


  bool StoredQueue::Pop(StoredEntry& entry)
  {
    const size_t position = dequeue_.load(std::memory_order_relaxed);
    Slot& slot = slots_[position & mask_];
    if (slot.sequence.load(std::memory_order_acquire) != position + 1)
    {
      return false;  // empty, or its producer is still writing it: at the next drain
    }
    entry = slot.entry;
    slot.sequence.store(position + mask_ + 1, std::memory_order_release);
    dequeue_.store(position + 1, std::memory_order_relaxed);
    return true;
  }
}
