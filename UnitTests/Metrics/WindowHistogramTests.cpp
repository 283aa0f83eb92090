#include "Metrics/WindowHistogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

using namespace IngestPerf;

TEST(WindowHistogram, EachBucketIsEightBucketsOfHistogram)
{
  EXPECT_EQ(321u, WindowHistogram::kBucketCount);
  EXPECT_EQ(8u, WindowHistogram::kMergeFactor);
  for (uint64_t value : {0ull, 15ull, 16ull, 17ull, 127ull, 128ull, 1000ull, 123456789ull, (1ull << 41) + 5})
  {
    const size_t coarse = WindowHistogram::BucketIndex(value);
    const uint64_t lowest = WindowHistogram::BucketLowest(coarse);
    const uint64_t end = lowest + WindowHistogram::BucketWidth(coarse);
    EXPECT_LE(lowest, value);
    EXPECT_LT(value, end);
    // The same edges as Histogram's: a coarse bucket starts and ends on fine bucket edges.
    EXPECT_EQ(lowest, Histogram::BucketLowest(Histogram::BucketIndex(lowest)));
    EXPECT_EQ(end, Histogram::BucketLowest(Histogram::BucketIndex(end)));
    if (value >= 128)
    {
      EXPECT_EQ(8u, Histogram::BucketIndex(end) - Histogram::BucketIndex(lowest)) << value;
    }
  }
  EXPECT_EQ(WindowHistogram::kBucketCount - 1, WindowHistogram::BucketIndex(1ull << 42));
}

TEST(WindowHistogram, QuantilesWithinOneBucketAndExactCountAndSum)
{
  WindowHistogram histogram{};
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> durations(15.0, 0.6);  // about 3 ms, in ns
  std::vector<int64_t> values;
  uint64_t sum = 0;
  for (int i = 0; i < 20000; i++)
  {
    const int64_t value = static_cast<int64_t>(durations(random));
    values.push_back(value);
    sum += static_cast<uint64_t>(value);
    histogram.Record(value);
  }
  std::sort(values.begin(), values.end());
  HistogramSnapshot snapshot;
  histogram.AddTo(snapshot);
  EXPECT_EQ(values.size(), snapshot.Count());
  EXPECT_EQ(values.size(), histogram.Count());
  EXPECT_EQ(sum, snapshot.Sum());
  for (double q : {0.5, 0.9, 0.99})
  {
    const int64_t exact = values[static_cast<size_t>(q * static_cast<double>(values.size())) - 1];
    const int64_t reported = snapshot.ValueAtQuantile(q);
    const size_t bucket = WindowHistogram::BucketIndex(static_cast<uint64_t>(exact));
    // Within one coarse bucket step of the exact sample quantile (1/8 of the value at most).
    EXPECT_LE(std::abs(reported - exact), static_cast<int64_t>(WindowHistogram::BucketWidth(bucket))) << q;
  }
  EXPECT_LE(snapshot.Min(), values.front());
  EXPECT_GE(snapshot.Max(), values.back());
}

TEST(WindowHistogram, ClearEmptiesAndNegativeIsZero)
{
  WindowHistogram histogram{};
  histogram.Record(-5);
  histogram.Record(1000);
  EXPECT_EQ(2u, histogram.Count());
  histogram.Reset();
  EXPECT_EQ(0u, histogram.Count());
  HistogramSnapshot snapshot;
  histogram.AddTo(snapshot);
  EXPECT_EQ(0u, snapshot.Count());
  EXPECT_EQ(0u, snapshot.Sum());
  histogram.Record(-5);
  histogram.AddTo(snapshot);
  EXPECT_EQ(0, snapshot.Max());
}
