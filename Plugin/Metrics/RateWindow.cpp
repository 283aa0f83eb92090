#include "Metrics/RateWindow.h"

#include <algorithm>

namespace IngestPerf
{
  namespace
  {
    constexpr int kValueBits = 40;
    constexpr uint64_t kValueMask = (uint64_t(1) << kValueBits) - 1;
    constexpr uint64_t kTagMask = (uint64_t(1) << (64 - kValueBits)) - 1;

    uint64_t TagOf(int64_t second)
    {
      return static_cast<uint64_t>(second) & kTagMask;
    }

    void Add(std::atomic<uint64_t>& slot, uint64_t tag, uint64_t amount)
    {
      uint64_t current = slot.load(std::memory_order_relaxed);
      for (;;)
      {
        uint64_t value = ((current >> kValueBits) == tag) ? (current & kValueMask) : 0;
        value = std::min(kValueMask, value + std::min(amount, kValueMask));
        const uint64_t next = (tag << kValueBits) | value;
        if (slot.compare_exchange_weak(current, next, std::memory_order_relaxed))
        {
          return;
        }
      }
    }

    uint64_t ValueAt(const std::atomic<uint64_t>& slot, uint64_t tag)
    {
      const uint64_t current = slot.load(std::memory_order_relaxed);
      return ((current >> kValueBits) == tag) ? (current & kValueMask) : 0;
    }
  }


  RateWindow::RateWindow()
  {
    Reset();
  }


  void RateWindow::Record(int64_t second, uint64_t bytes)
  {
    const size_t index = static_cast<uint64_t>(second) % kSlots;
    const uint64_t tag = TagOf(second);
    Add(instances_[index], tag, 1);
    Add(bytes_[index], tag, bytes);
  }


  void RateWindow::Reset()
  {
    for (size_t i = 0; i < kSlots; i++)
    {
      // A tag no real second has for the next 2^24 seconds from any slot's point of view.
      instances_[i].store(kTagMask << kValueBits, std::memory_order_relaxed);
      bytes_[i].store(kTagMask << kValueBits, std::memory_order_relaxed);
    }
  }


  RateWindow::Totals RateWindow::Sum(int64_t nowSecond, int seconds) const
  {
    seconds = std::max(1, std::min(kMaxWindowSeconds, seconds));
    Totals totals{0, 0};
    for (int64_t second = nowSecond - seconds; second < nowSecond; second++)
    {
      if (second < 0)
      {
        continue;
      }
      const size_t index = static_cast<uint64_t>(second) % kSlots;
      totals.instances += ValueAt(instances_[index], TagOf(second));
      totals.bytes += ValueAt(bytes_[index], TagOf(second));
    }
    return totals;
  }
}
