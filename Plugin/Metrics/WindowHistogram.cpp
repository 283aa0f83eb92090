#include "Metrics/WindowHistogram.h"

#include <algorithm>

namespace IngestPerf
{
  namespace
  {
    constexpr uint64_t kLinearLimit = uint64_t(1) << (WindowHistogram::kSubBucketBits + 1);
    constexpr uint64_t kSubBucketCount = uint64_t(1) << WindowHistogram::kSubBucketBits;
    constexpr uint64_t kSaturationValue = uint64_t(1) << Histogram::kMaxValueBits;
  }


  size_t WindowHistogram::BucketIndex(uint64_t value)
  {
    if (value < kLinearLimit)
    {
      return static_cast<size_t>(value);
    }
    if (value >= kSaturationValue)
    {
      return kBucketCount - 1;
    }
    const int shift = (63 - __builtin_clzll(value)) - kSubBucketBits;
    return static_cast<size_t>((static_cast<uint64_t>(shift) << kSubBucketBits) + (value >> shift));
  }


  uint64_t WindowHistogram::BucketLowest(size_t index)
  {
    if (index < kLinearLimit)
    {
      return index;
    }
    const uint64_t shift = (index >> kSubBucketBits) - 1;
    return ((index & (kSubBucketCount - 1)) + kSubBucketCount) << shift;
  }


  uint64_t WindowHistogram::BucketWidth(size_t index)
  {
    return index < kLinearLimit ? 1 : uint64_t(1) << ((index >> kSubBucketBits) - 1);
  }


  void WindowHistogram::Record(int64_t value)
  {
    const uint64_t v = value < 0 ? 0 : static_cast<uint64_t>(value);
    buckets_[BucketIndex(v)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
  }


  void WindowHistogram::Clear()
  {
    for (auto& bucket : buckets_)
    {
      if (bucket.load(std::memory_order_relaxed) != 0)
      {
        bucket.store(0, std::memory_order_relaxed);
      }
    }
    if (sum_.load(std::memory_order_relaxed) != 0)
    {
      sum_.store(0, std::memory_order_relaxed);
    }
  }


  void WindowHistogram::AddTo(HistogramSnapshot& target) const
  {
    uint64_t counts[kBucketCount];
    size_t first = kBucketCount;
    size_t last = 0;
    for (size_t i = 0; i < kBucketCount; i++)
    {
      counts[i] = buckets_[i].load(std::memory_order_relaxed);
      if (counts[i] != 0)
      {
        first = std::min(first, i);
        last = i;
      }
    }
    if (first == kBucketCount)
    {
      return;
    }
    const auto add = [&](size_t i) {
      const uint64_t lowest = BucketLowest(i);
      const uint64_t highest = (i == kBucketCount - 1) ? lowest : lowest + BucketWidth(i) - 1;
      target.AddRange(lowest, highest, counts[i]);
    };
    // The outermost two first: the target widens its range twice at most, not at every bucket.
    add(last);
    for (size_t i = first; i < last; i++)
    {
      if (counts[i] != 0)
      {
        add(i);
      }
    }
    target.AddSum(sum_.load(std::memory_order_relaxed));
  }


  uint64_t WindowHistogram::Count() const
  {
    uint64_t count = 0;
    for (const auto& bucket : buckets_)
    {
      count += bucket.load(std::memory_order_relaxed);
    }
    return count;
  }
}
