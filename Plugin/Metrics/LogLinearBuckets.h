// The bucket layout that Histogram (64 buckets per power of two) and WindowHistogram (8) share,
// written once: values below 2^(SubBucketBits+1) have one bucket each, every power of two above is
// cut into 2^SubBucketBits equal buckets, and values from 2^MaxValueBits up share the last bucket.
#pragma once

#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  template <int SubBucketBits, int MaxValueBits>
  struct LogLinearBuckets
  {
    static constexpr uint64_t kLinearLimit = uint64_t(1) << (SubBucketBits + 1);
    static constexpr uint64_t kSubBucketCount = uint64_t(1) << SubBucketBits;
    static constexpr uint64_t kSaturationValue = uint64_t(1) << MaxValueBits;
    // Linear buckets, then 2^SubBucketBits per power of two up to 2^MaxValueBits, then the
    // saturation bucket, whose lowest value is exactly 2^MaxValueBits.
    static constexpr size_t kCount =
      (static_cast<size_t>(MaxValueBits - SubBucketBits) << SubBucketBits) + (size_t(1) << SubBucketBits) + 1;

    static size_t Index(uint64_t value)
    {
      if (value < kLinearLimit)
      {
        return static_cast<size_t>(value);
      }
      if (value >= kSaturationValue)
      {
        return kCount - 1;
      }
      const int shift = (63 - __builtin_clzll(value)) - SubBucketBits;
      const uint64_t subBucket = value >> shift;  // in [2^k, 2^(k+1))
      return static_cast<size_t>((static_cast<uint64_t>(shift) << SubBucketBits) + subBucket);
    }

    static uint64_t Lowest(size_t index)
    {
      if (index < kLinearLimit)
      {
        return index;
      }
      const uint64_t shift = (index >> SubBucketBits) - 1;
      return ((index & (kSubBucketCount - 1)) + kSubBucketCount) << shift;
    }

    static uint64_t Width(size_t index)
    {
      return index < kLinearLimit ? 1 : uint64_t(1) << ((index >> SubBucketBits) - 1);
    }
  };
}
