#include "Metrics/WindowHistogram.h"

#include "Metrics/LogLinearBuckets.h"

#include <algorithm>

namespace IngestPerf
{
  namespace
  {
    using Buckets = LogLinearBuckets<WindowHistogram::kSubBucketBits, Histogram::kMaxValueBits>;
  }


  size_t WindowHistogram::BucketIndex(uint64_t value)
  {
    return Buckets::Index(value);
  }


  uint64_t WindowHistogram::BucketLowest(size_t index)
  {
    return Buckets::Lowest(index);
  }


  uint64_t WindowHistogram::BucketWidth(size_t index)
  {
    return Buckets::Width(index);
  }


  void WindowHistogram::Record(int64_t value)
  {
    const uint64_t v = value < 0 ? 0 : static_cast<uint64_t>(value);
    buckets_[BucketIndex(v)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(v, std::memory_order_relaxed);
  }


  void WindowHistogram::Reset()
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
