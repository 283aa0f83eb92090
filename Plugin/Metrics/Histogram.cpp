#include "Metrics/Histogram.h"

#include "Metrics/LogLinearBuckets.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace IngestPerf
{
  namespace
  {
    using Buckets = LogLinearBuckets<Histogram::kSubBucketBits, Histogram::kMaxValueBits>;
    constexpr uint64_t kSaturationValue = Buckets::kSaturationValue;
  }


  size_t Histogram::BucketIndex(uint64_t value)
  {
    return Buckets::Index(value);
  }


  uint64_t Histogram::BucketLowest(size_t index)
  {
    return Buckets::Lowest(index);
  }


  uint64_t Histogram::BucketWidth(size_t index)
  {
    return Buckets::Width(index);
  }


  void Histogram::Record(int64_t value)
  {
    const uint64_t v = value < 0 ? 0 : static_cast<uint64_t>(value);
    const int64_t signedValue = static_cast<int64_t>(v);

    buckets_[BucketIndex(v)].fetch_add(1, std::memory_order_relaxed);
    if (v >= kSaturationValue)
    {
      saturated_.fetch_add(1, std::memory_order_relaxed);
    }
    sum_.fetch_add(v, std::memory_order_relaxed);

    WidenBounds(signedValue, signedValue);
    // Published last, with release: a reader that sees the count sees the bucket and bounds.
    count_.fetch_add(1, std::memory_order_release);
  }


  void Histogram::WidenBounds(int64_t low, int64_t high)
  {
    const int64_t inverted = std::numeric_limits<int64_t>::max() - low;
    int64_t currentInverted = invertedMin_.load(std::memory_order_relaxed);
    while (inverted > currentInverted &&
           !invertedMin_.compare_exchange_weak(currentInverted, inverted, std::memory_order_relaxed))
    {
    }
    int64_t currentMax = max_.load(std::memory_order_relaxed);
    while (high > currentMax && !max_.compare_exchange_weak(currentMax, high, std::memory_order_relaxed))
    {
    }
  }


  Histogram::Occupied Histogram::OccupiedBuckets() const
  {
    const int64_t min = std::numeric_limits<int64_t>::max() - invertedMin_.load(std::memory_order_relaxed);
    const int64_t max = max_.load(std::memory_order_relaxed);
    return {min, max, BucketIndex(static_cast<uint64_t>(std::max<int64_t>(0, std::min(min, max)))),
            BucketIndex(static_cast<uint64_t>(std::max<int64_t>(0, max))) + 1};
  }


  Histogram::Histogram()
  {
    for (auto& bucket : buckets_)
    {
      bucket.store(0, std::memory_order_relaxed);
    }
    count_.store(0, std::memory_order_relaxed);
    sum_.store(0, std::memory_order_relaxed);
    saturated_.store(0, std::memory_order_relaxed);
    invertedMin_.store(0, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
  }


  void Histogram::Reset()
  {
    // Only the buckets between min and max can hold counts: a histogram of a few hundred
    // occupied buckets is cleared without touching its other 9 KB (an AssociationTracker peer
    // taken over on Orthanc's ingest path resets two).
    if (invertedMin_.load(std::memory_order_relaxed) != 0)
    {
      const Occupied occupied = OccupiedBuckets();
      for (size_t i = occupied.first; i < occupied.end; i++)
      {
        buckets_[i].store(0, std::memory_order_relaxed);
      }
    }
    sum_.store(0, std::memory_order_relaxed);
    saturated_.store(0, std::memory_order_relaxed);
    invertedMin_.store(0, std::memory_order_relaxed);
    max_.store(0, std::memory_order_relaxed);
    count_.store(0, std::memory_order_release);
  }


  void Histogram::AddFrom(const Histogram& other)
  {
    const uint64_t count = other.count_.load(std::memory_order_acquire);
    if (count == 0)
    {
      return;
    }
    const Occupied occupied = other.OccupiedBuckets();
    for (size_t i = occupied.first; i < occupied.end; i++)
    {
      const uint32_t bucket = other.buckets_[i].load(std::memory_order_relaxed);
      if (bucket != 0)
      {
        buckets_[i].fetch_add(bucket, std::memory_order_relaxed);
      }
    }
    saturated_.fetch_add(other.saturated_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    sum_.fetch_add(other.sum_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    WidenBounds(std::min(occupied.min, occupied.max), occupied.max);
    count_.fetch_add(count, std::memory_order_release);  // last, as in Record()
  }


  HistogramSnapshot Histogram::Snapshot() const
  {
    HistogramSnapshot snapshot;
    snapshot.count_ = count_.load(std::memory_order_acquire);
    if (snapshot.count_ == 0)
    {
      return snapshot;  // buckets stay empty: no allocation for idle histograms
    }
    // Only the range between the exact min and max is read and kept: most histograms span a few
    // hundred of the buckets. Every Record() counted by the acquire load above has already moved
    // min and max (the count is published last), so nothing it recorded is outside the range.
    const Occupied occupied = OccupiedBuckets();
    uint64_t bucketTotal = 0;
    snapshot.offset_ = occupied.first;
    snapshot.buckets_.resize(occupied.end - occupied.first);
    for (size_t i = occupied.first; i < occupied.end; i++)
    {
      const uint64_t value = buckets_[i].load(std::memory_order_relaxed);
      snapshot.buckets_[i - occupied.first] = value;
      bucketTotal += value;
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


  void Histogram::AddTo(HistogramSnapshot& target) const
  {
    if (count_.load(std::memory_order_acquire) == 0)
    {
      return;
    }
    // The same range argument as in Snapshot().
    const Occupied occupied = OccupiedBuckets();
    target.Widen(occupied.first, occupied.end);
    uint64_t added = 0;
    for (size_t i = occupied.first; i < occupied.end; i++)
    {
      const uint64_t value = buckets_[i].load(std::memory_order_relaxed);
      target.buckets_[i - target.offset_] += value;
      added += value;
    }
    target.count_ += added;
    target.sum_ += sum_.load(std::memory_order_relaxed);
    target.saturated_ += saturated_.load(std::memory_order_relaxed);
    target.min_ = std::min(target.min_, occupied.min);
    target.max_ = std::max(target.max_, occupied.max);
  }


  void HistogramSnapshot::CountsBelow(const size_t* indexes, size_t n, uint64_t* counts) const
  {
    uint64_t below = 0;
    size_t next = offset_;  // the first bucket not yet added to `below`
    const size_t end = offset_ + buckets_.size();
    for (size_t i = 0; i < n; i++)
    {
      const size_t limit = std::min(std::max(indexes[i], offset_), end);
      for (; next < limit; next++)
      {
        below += buckets_[next - offset_];
      }
      counts[i] = below;
    }
  }


  void HistogramSnapshot::Widen(size_t first, size_t end)
  {
    if (buckets_.empty())
    {
      buckets_.assign(end - first, 0);
      offset_ = first;
      return;
    }
    size_t newFirst = offset_;
    size_t newEnd = offset_ + buckets_.size();
    if (first >= newFirst && end <= newEnd)
    {
      return;
    }
    // A side that grows grows by one more power of two (64 buckets) than asked: merging the 128
    // streams of a full table into one snapshot then copies the vector a few times, not once per
    // stream whose range sticks out by a bucket (a profile of /perf/stats with full tables: 7% of
    // the answer in these copies). The extra buckets are zeros, which nothing tells apart.
    constexpr size_t kSlack = size_t(1) << Histogram::kSubBucketBits;
    if (first < newFirst)
    {
      newFirst = first > kSlack ? first - kSlack : 0;
    }
    if (end > newEnd)
    {
      newEnd = std::min(end + kSlack, Histogram::kBucketCount);
    }
    std::vector<uint64_t> widened(newEnd - newFirst, 0);
    std::copy(buckets_.begin(), buckets_.end(), widened.begin() + (offset_ - newFirst));
    buckets_.swap(widened);
    offset_ = newFirst;
  }


  HistogramSnapshot::HistogramSnapshot() :
    offset_(0),
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
    int64_t value = 0;
    ValuesAtQuantiles(&q, 1, &value);
    return value;
  }


  void HistogramSnapshot::ValuesAtQuantiles(const double* q, size_t n, int64_t* values) const
  {
    if (count_ == 0 || buckets_.empty())
    {
      std::fill(values, values + n, 0);
      return;
    }
    size_t next = 0;  // the first quantile not found yet
    const auto rankOf = [this](double level) {
      const double clamped = std::min(1.0, std::max(0.0, level));
      const uint64_t rank = static_cast<uint64_t>(std::ceil(clamped * static_cast<double>(count_)));
      return std::max<uint64_t>(1, std::min(rank, count_));
    };
    uint64_t rank = n > 0 ? rankOf(q[0]) : 0;
    uint64_t cumulated = 0;
    for (size_t k = 0; k < buckets_.size() && next < n; k++)
    {
      cumulated += buckets_[k];
      if (cumulated < rank)
      {
        continue;
      }
      const size_t i = offset_ + k;
      int64_t value = max_;  // saturated: only the exact max is known
      if (i != Histogram::kBucketCount - 1)
      {
        const uint64_t lowest = Histogram::BucketLowest(i);
        const uint64_t middle = lowest + (Histogram::BucketWidth(i) - 1) / 2;
        value = std::min(max_, std::max(min_, static_cast<int64_t>(middle)));
      }
      while (next < n && cumulated >= rank)
      {
        values[next++] = value;
        rank = next < n ? rankOf(q[next]) : 0;
      }
    }
    for (; next < n; next++)
    {
      values[next] = max_;
    }
  }


  void HistogramSnapshot::Merge(const HistogramSnapshot& other)
  {
    if (other.count_ == 0)
    {
      return;
    }
    Widen(other.offset_, other.offset_ + other.buckets_.size());
    for (size_t k = 0; k < other.buckets_.size(); k++)
    {
      buckets_[other.offset_ - offset_ + k] += other.buckets_[k];
    }
    count_ += other.count_;
    sum_ += other.sum_;
    saturated_ += other.saturated_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }


  void HistogramSnapshot::Add(int64_t value)
  {
    const uint64_t v = value < 0 ? 0 : static_cast<uint64_t>(value);
    const size_t index = Histogram::BucketIndex(v);
    Widen(index, index + 1);
    buckets_[index - offset_]++;
    count_++;
    sum_ += v;
    if (index + 1 == Histogram::kBucketCount)
    {
      saturated_++;
    }
    min_ = std::min(min_, static_cast<int64_t>(v));
    max_ = std::max(max_, static_cast<int64_t>(v));
  }


  void HistogramSnapshot::AddRange(uint64_t lowest, uint64_t highest, uint64_t count)
  {
    if (count == 0)
    {
      return;
    }
    const size_t index = Histogram::BucketIndex(lowest + (highest - lowest) / 2);
    Widen(index, index + 1);
    buckets_[index - offset_] += count;
    count_ += count;
    if (index + 1 == Histogram::kBucketCount)
    {
      saturated_ += count;
    }
    min_ = std::min(min_, static_cast<int64_t>(lowest));
    max_ = std::max(max_, static_cast<int64_t>(highest));
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
    if (sum_ != other.sum_ || saturated_ != other.saturated_ || min_ != other.min_ || max_ != other.max_)
    {
      return false;
    }
    // Bucket by bucket over both kept ranges: a range may carry zeros at its ends (Widen).
    const auto at = [](const HistogramSnapshot& h, size_t i) {
      return i >= h.offset_ && i < h.offset_ + h.buckets_.size() ? h.buckets_[i - h.offset_] : 0;
    };
    const size_t first = std::min(offset_, other.offset_);
    const size_t end = std::max(offset_ + buckets_.size(), other.offset_ + other.buckets_.size());
    for (size_t i = first; i < end; i++)
    {
      if (at(*this, i) != at(other, i))
      {
        return false;
      }
    }
    return true;
  }
}
