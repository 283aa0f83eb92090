// A coarse histogram for the slots of the time windows (TimeWindows): the boundaries of Histogram
// merged by a fixed factor 8, that is 8 buckets per power of two instead of 64 (values below 16
// exact), so a quantile is reported within one coarse bucket (at most 1/8 of its value wide)
// instead of 1/64. 1.3 KiB instead of 9.7 KiB: a slot holds 16 of them and there are 96 slots per
// transport. Recording is two relaxed atomic additions (bucket and sum); the count is the sum of
// the buckets, min and max are the edges of the first and last occupied buckets.
//
// All-zero memory is a valid empty histogram and nothing is constructed (as for Histogram), so
// slots can live in lazily backed memory. `WindowHistogram histogram{};` for a standalone one.
#pragma once

#include "Metrics/Histogram.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  class WindowHistogram
  {
  public:
    static constexpr int kSubBucketBits = 3;
    // Histogram's layout with kSubBucketBits = 3 (Metrics/LogLinearBuckets.h): 321 buckets.
    static constexpr size_t kBucketCount = LogLinearBuckets<kSubBucketBits, Histogram::kMaxValueBits>::kCount;
    // How many buckets of Histogram one bucket of this one covers (above the exact values).
    static constexpr uint64_t kMergeFactor = uint64_t(1) << (Histogram::kSubBucketBits - kSubBucketBits);

    // Wait-free. Negative values are recorded as 0.
    void Record(int64_t value);
    // Zeroes the buckets that are not zero already: an untouched page stays untouched.
    void Reset();

    // Adds the content, each bucket counted at its middle (see HistogramSnapshot::AddRange).
    void AddTo(HistogramSnapshot& target) const;
    uint64_t Count() const;

    static size_t BucketIndex(uint64_t value);
    static uint64_t BucketLowest(size_t index);
    static uint64_t BucketWidth(size_t index);

  private:
    std::array<std::atomic<uint32_t>, kBucketCount> buckets_;
    std::atomic<uint64_t> sum_;
  };
}
