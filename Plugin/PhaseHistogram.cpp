#include "PhaseHistogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace IngestPerf
{
  namespace
  {
    constexpr uint64_t kLinearLimit = uint64_t(1) << (PhaseHistogram::kSubBucketBits + 1);
    constexpr uint64_t kSubBucketCount = uint64_t(1) << PhaseHistogram::kSubBucketBits;
    constexpr uint64_t kSaturationValue = uint64_t(1) << PhaseHistogram::kMaxValueBits;
  }


  size_t PhaseHistogram::BucketIndex(uint64_t value)
  {
    if (value < kLinearLimit)
    {
      return static_cast<size_t>(value);
    }
    if (value >= kSaturationValue)
    {
      return kBucketCount - 1;
    }
    const int highestBit = 63 - __builtin_clzll(value);
    const int shift = highestBit - kSubBucketBits;
    const uint64_t subBucket = value >> shift;  // in [2^k, 2^(k+1))
    return static_cast<size_t>((static_cast<uint64_t>(shift) << kSubBucketBits) + subBucket);
  }


  uint64_t PhaseHistogram::BucketLowest(size_t index)
  {
    if (index < kLinearLimit)
    {
      return index;
    }
    const uint64_t shift = (index >> kSubBucketBits) - 1;
    const uint64_t subBucket = (index & (kSubBucketCount - 1)) + kSubBucketCount;
    return subBucket << shift;
  }


  uint64_t PhaseHistogram::BucketWidth(size_t index)
  {
    if (index < kLinearLimit)
    {
      return 1;
    }
    return uint64_t(1) << ((index >> kSubBucketBits) - 1);
  }


  void PhaseHistogram::Record(int64_t value)
  {
    const uint64_t v = value < 0 ? 0 : static_cast<uint64_t>(value);
    const int64_t signedValue = static_cast<int64_t>(v);

    buckets_[BucketIndex(v)].fetch_add(1, std::memory_order_relaxed);
    if (v >= kSaturationValue)
    {
      saturated_.fetch_add(1, std::memory_order_relaxed);
    }
    sum_.fetch_add(v, std::memory_order_relaxed);

    const int64_t inverted = std::numeric_limits<int64_t>::max() - signedValue;
    int64_t currentInverted = invertedMin_.load(std::memory_order_relaxed);
    while (inverted > currentInverted &&
           !invertedMin_.compare_exchange_weak(currentInverted, inverted, std::memory_order_relaxed))
    {
    }
    int64_t currentMax = max_.load(std::memory_order_relaxed);
    while (signedValue > currentMax && !max_.compare_exchange_weak(currentMax, signedValue, std::memory_order_relaxed))
    {
    }
    // Published last, with release: a reader that sees the count sees the bucket and bounds.
    count_.fetch_add(1, std::memory_order_release);
  }


  void PhaseHistogram::Reset()
  {
    for (auto& bucket : buckets_)
    {
      bucket.store(0, std::memory_order_relaxed);
    }
    sum_.store(0, std::memory_order_relaxed);
    saturated_.store(0, std::memory_order_relaxed);
    invertedMin_.store(0, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
    count_.store(0, std::memory_order_release);
  }


  HistogramSnapshot PhaseHistogram::Snapshot() const
  {
    HistogramSnapshot snapshot;
    snapshot.count_ = count_.load(std::memory_order_acquire);
    if (snapshot.count_ == 0)
    {
      return snapshot;  // buckets stay empty: no allocation for idle histograms
    }
    snapshot.buckets_.resize(kBucketCount);
    uint64_t bucketTotal = 0;
    for (size_t i = 0; i < kBucketCount; i++)
    {
      snapshot.buckets_[i] = buckets_[i].load(std::memory_order_relaxed);
      bucketTotal += snapshot.buckets_[i];
    }
    // Under concurrent Record() the buckets may run ahead of the count read above: use the
    // buckets, so that quantiles and count always agree.
    snapshot.count_ = bucketTotal;
    snapshot.sum_ = sum_.load(std::memory_order_relaxed);
    snapshot.saturated_ = saturated_.load(std::memory_order_relaxed);
    snapshot.min_ = std::numeric_limits<int64_t>::max() - invertedMin_.load(std::memory_order_relaxed);
    snapshot.max_ = max_.load(std::memory_order_relaxed);
    return snapshot;
  }


  HistogramSnapshot::HistogramSnapshot() :
    count_(0),
    sum_(0),
    saturated_(0),
    min_(std::numeric_limits<int64_t>::max()),
    max_(0)
  {
  }


  double HistogramSnapshot::Mean() const
  {
    return count_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(count_);
  }


  int64_t HistogramSnapshot::ValueAtQuantile(double q) const
  {
    if (count_ == 0 || buckets_.empty())
    {
      return 0;
    }
    q = std::min(1.0, std::max(0.0, q));
    uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
    rank = std::max<uint64_t>(1, std::min(rank, count_));

    uint64_t cumulated = 0;
    for (size_t i = 0; i < buckets_.size(); i++)
    {
      cumulated += buckets_[i];
      if (cumulated >= rank)
      {
        if (i == PhaseHistogram::kBucketCount - 1)
        {
          return max_;  // saturated: only the exact max is known
        }
        const uint64_t lowest = PhaseHistogram::BucketLowest(i);
        const uint64_t middle = lowest + (PhaseHistogram::BucketWidth(i) - 1) / 2;
        const int64_t value = static_cast<int64_t>(middle);
        return std::min(max_, std::max(min_, value));
      }
    }
    return max_;
  }


  void HistogramSnapshot::Merge(const HistogramSnapshot& other)
  {
    if (other.count_ == 0)
    {
      return;
    }
    if (buckets_.empty())
    {
      buckets_.assign(PhaseHistogram::kBucketCount, 0);
    }
    for (size_t i = 0; i < other.buckets_.size(); i++)
    {
      buckets_[i] += other.buckets_[i];
    }
    count_ += other.count_;
    sum_ += other.sum_;
    saturated_ += other.saturated_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }


  bool HistogramSnapshot::operator==(const HistogramSnapshot& other) const
  {
    if (count_ != other.count_)
    {
      return false;
    }
    if (count_ == 0)
    {
      return true;
    }
    return buckets_ == other.buckets_ && sum_ == other.sum_ && saturated_ == other.saturated_ && min_ == other.min_ &&
           max_ == other.max_;
  }
}
