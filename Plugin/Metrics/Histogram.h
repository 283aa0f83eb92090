// A log-linear histogram of non-negative integer values (nanoseconds or bytes) with fixed memory,
// lock-free concurrent Record() and plain, mergeable snapshots for readers.
//
// Values below 2^(kSubBucketBits+1) have one bucket each (exact). Above, every power of two is cut
// into 2^kSubBucketBits equal buckets, so a bucket is at most 1/64 of its lowest value wide and a
// quantile reported at the bucket middle is within 0.8% of the exact sample quantile (the 1%
// promised). Values at or above 2^kMaxValueBits (73 minutes in ns, 4 TiB in bytes) land in the last
// bucket and are counted as saturated; min, max, sum stay exact. 9.7 KiB per histogram.
//
// All-zero memory is a valid empty histogram and the default constructor writes nothing, so large
// pools of histograms can live in lazily mapped memory that costs nothing until first used. Use
// `Histogram histogram{};` (value-initialized) for a standalone one.
#pragma once

#include "Metrics/LogLinearBuckets.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace IngestPerf
{
  class HistogramSnapshot;

  class Histogram
  {
  public:
    static constexpr int kSubBucketBits = 6;
    static constexpr int kMaxValueBits = 42;
    // Linear buckets, then 2^k buckets per power of two up to 2^kMaxValueBits, then one
    // saturation bucket whose lowest value is exactly 2^kMaxValueBits (Metrics/LogLinearBuckets.h).
    static constexpr size_t kBucketCount = LogLinearBuckets<kSubBucketBits, kMaxValueBits>::kCount;

    // Zeroes every bucket. Histograms in lazily backed memory (streams, peers) are never
    // constructed: zero-filled pages are empty histograms.
    Histogram();
    Histogram(const Histogram&) = delete;
    Histogram& operator=(const Histogram&) = delete;

    // Wait-free but for the min/max compare-and-swap, which retries only while another thread
    // is moving the same bound. Negative values are recorded as 0.
    void Record(int64_t value);

    // Not atomic with respect to concurrent Record(): a value recorded during Reset() may survive
    // in part (count without bucket, say). Readers only ever see non-negative, bounded numbers.
    // Clears the buckets between min and max only: the others are zero already.
    void Reset();

    // Adds `other`'s content, its values as they were recorded (buckets, sum, bounds): a label set
    // folded into its transport's "(other)" stream when the labels age out (StreamStats::AddFrom).
    // Concurrent records into either histogram are allowed, as with Record().
    void AddFrom(const Histogram& other);

    HistogramSnapshot Snapshot() const;
    // Adds the current content to `target` (as target.Merge(Snapshot()) would, without the copy).
    void AddTo(HistogramSnapshot& target) const;
    uint64_t Count() const { return count_.load(std::memory_order_acquire); }

    static size_t BucketIndex(uint64_t value);
    static uint64_t BucketLowest(size_t index);
    static uint64_t BucketWidth(size_t index);

  private:
    // The recorded bounds and the buckets between them, [first, end): the only ones that can hold
    // counts. Only meaningful once something was recorded.
    struct Occupied
    {
      int64_t min;
      int64_t max;
      size_t first;
      size_t end;
    };
    Occupied OccupiedBuckets() const;
    // Moves the recorded bounds out to hold [low, high] (compare-and-swap, retried only while another
    // thread moves the same bound).
    void WidenBounds(int64_t low, int64_t high);

    // 32-bit buckets: one bucket would need 4 billion instances to wrap.
    std::array<std::atomic<uint32_t>, kBucketCount> buckets_;
    std::atomic<uint64_t> count_;
    std::atomic<uint64_t> sum_;
    std::atomic<uint64_t> saturated_;
    std::atomic<int64_t> invertedMin_;  // INT64_MAX - min, so that zero means "no value yet"
    std::atomic<int64_t> max_;
  };


  // A plain copy of a histogram: what readers compute quantiles on and merge.
  class HistogramSnapshot
  {
  public:
    HistogramSnapshot();

    uint64_t Count() const { return count_; }
    uint64_t Sum() const { return sum_; }
    uint64_t Saturated() const { return saturated_; }
    int64_t Min() const { return count_ == 0 ? 0 : min_; }
    int64_t Max() const { return count_ == 0 ? 0 : max_; }
    double Mean() const;

    // q in [0, 1]; the value of rank ceil(q * count) (at least 1) in sorted order, reported at
    // the middle of its bucket and clamped to [min, max]. 0 when empty.
    int64_t ValueAtQuantile(double q) const;
    // ValueAtQuantile of each of `n` increasing quantiles, in one pass over the buckets.
    void ValuesAtQuantiles(const double* q, size_t n, int64_t* values) const;

    // For each bucket index of `indexes` (increasing), the number of values in the buckets below
    // it: exactly the values below BucketLowest(index), since buckets never straddle a bound.
    void CountsBelow(const size_t* indexes, size_t n, uint64_t* counts) const;
    // The values in the bucket of that index (0 outside the kept range).
    uint64_t BucketCount(size_t index) const
    {
      return index >= offset_ && index - offset_ < buckets_.size() ? buckets_[index - offset_] : 0;
    }

    void Merge(const HistogramSnapshot& other);
    // One more value, as Histogram::Record would count it (readers completing a copy).
    void Add(int64_t value);
    // `count` values known only to lie in [lowest, highest] (a bucket of a coarser histogram):
    // counted in the bucket of the range's middle, min and max widened to the range's edges. The
    // sum is left as it is: add the exact one with AddSum.
    void AddRange(uint64_t lowest, uint64_t highest, uint64_t count);
    void AddSum(uint64_t sum) { sum_ += sum; }

    bool operator==(const HistogramSnapshot& other) const;

  private:
    friend class Histogram;

    // Makes the kept range cover [first, end) (bucket indexes), with zeros where new.
    void Widen(size_t first, size_t end);

    size_t offset_;  // index of buckets_[0]: only the occupied range is kept
    std::vector<uint64_t> buckets_;
    uint64_t count_;
    uint64_t sum_;
    uint64_t saturated_;
    int64_t min_;
    int64_t max_;
  };
}
