#include "Metrics/Histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

using IngestPerf::Histogram;
using IngestPerf::HistogramSnapshot;

namespace
{
  // The exact sample quantile with the histogram's rank definition: rank ceil(q * n), at least 1.
  int64_t ExactQuantile(std::vector<int64_t> sorted, double q)
  {
    std::sort(sorted.begin(), sorted.end());
    size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    rank = std::max<size_t>(1, std::min(rank, sorted.size()));
    return sorted[rank - 1];
  }

  void ExpectQuantilesWithinOnePercent(const std::vector<int64_t>& values)
  {
    Histogram histogram{};
    for (int64_t v : values)
    {
      histogram.Record(v);
    }
    const HistogramSnapshot snapshot = histogram.Snapshot();
    ASSERT_EQ(values.size(), snapshot.Count());
    for (double q : {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 1.0})
    {
      const double exact = static_cast<double>(ExactQuantile(values, q));
      const double reported = static_cast<double>(snapshot.ValueAtQuantile(q));
      EXPECT_LE(std::fabs(reported - exact), 0.01 * exact)
        << "q=" << q << " exact=" << exact << " reported=" << reported;
    }
    EXPECT_EQ(*std::min_element(values.begin(), values.end()), snapshot.Min());
    EXPECT_EQ(*std::max_element(values.begin(), values.end()), snapshot.Max());
    int64_t sum = 0;
    for (int64_t v : values)
    {
      sum += v;
    }
    EXPECT_EQ(static_cast<uint64_t>(sum), snapshot.Sum());
  }
}


TEST(Histogram, BucketsTileTheRangeWithoutGapsOrOverlap)
{
  uint64_t expectedLowest = 0;
  for (size_t i = 0; i + 1 < Histogram::kBucketCount; i++)
  {
    ASSERT_EQ(expectedLowest, Histogram::BucketLowest(i)) << "bucket " << i;
    const uint64_t width = Histogram::BucketWidth(i);
    ASSERT_EQ(i, Histogram::BucketIndex(expectedLowest));
    ASSERT_EQ(i, Histogram::BucketIndex(expectedLowest + width - 1));
    // Relative width bounds the quantile error: at most 1/64 of the lowest value.
    if (width > 1)
    {
      ASSERT_LE(static_cast<double>(width) / static_cast<double>(expectedLowest), 1.0 / 64 + 1e-12);
    }
    expectedLowest += width;
  }
  EXPECT_EQ(uint64_t(1) << Histogram::kMaxValueBits, expectedLowest);
  EXPECT_EQ(Histogram::kBucketCount - 1, Histogram::BucketIndex(expectedLowest));
  EXPECT_EQ(Histogram::kBucketCount - 1, Histogram::BucketIndex(UINT64_MAX));
}


TEST(Histogram, SmallValuesAreExact)
{
  std::vector<int64_t> values;
  for (int64_t v = 0; v < 128; v++)
  {
    values.push_back(v);
  }
  Histogram histogram{};
  for (int64_t v : values)
  {
    histogram.Record(v);
  }
  const HistogramSnapshot snapshot = histogram.Snapshot();
  for (double q : {0.01, 0.5, 0.99, 1.0})
  {
    EXPECT_EQ(ExactQuantile(values, q), snapshot.ValueAtQuantile(q));
  }
}


TEST(Histogram, UniformRandomQuantilesWithinOnePercent)
{
  std::mt19937_64 random(42);
  std::uniform_int_distribution<int64_t> distribution(1000, 50000000);  // 1 us .. 50 ms
  std::vector<int64_t> values(100000);
  for (int64_t& v : values)
  {
    v = distribution(random);
  }
  ExpectQuantilesWithinOnePercent(values);
}


TEST(Histogram, SkewedLogNormalQuantilesWithinOnePercent)
{
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> distribution(13.0, 2.0);  // median ~0.4 ms, long tail
  std::vector<int64_t> values(100000);
  for (int64_t& v : values)
  {
    v = static_cast<int64_t>(distribution(random));
  }
  ExpectQuantilesWithinOnePercent(values);
}


TEST(Histogram, BimodalWithRareOutliersWithinOnePercent)
{
  // The storescu shape: most gaps ~45 ms (delayed ACK), some ~4 ms, a few seconds-long stalls.
  std::mt19937_64 random(3);
  std::normal_distribution<double> slow(45e6, 2e6), fast(4e6, 0.5e6);
  std::vector<int64_t> values;
  for (int i = 0; i < 50000; i++)
  {
    values.push_back(static_cast<int64_t>(std::max(1.0, (i % 10 == 0) ? fast(random) : slow(random))));
  }
  for (int i = 0; i < 30; i++)
  {
    values.push_back(int64_t(3000000000) + i * 1000);
  }
  ExpectQuantilesWithinOnePercent(values);
}


TEST(Histogram, EmptySnapshotIsZero)
{
  Histogram histogram{};
  const HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(0u, snapshot.Count());
  EXPECT_EQ(0, snapshot.ValueAtQuantile(0.5));
  EXPECT_EQ(0, snapshot.Min());
  EXPECT_EQ(0, snapshot.Max());
  EXPECT_EQ(0.0, snapshot.Mean());
}


TEST(Histogram, NegativeValuesAreRecordedAsZeroAndHugeOnesSaturate)
{
  Histogram histogram{};
  histogram.Record(-5);
  const int64_t huge = (int64_t(1) << Histogram::kMaxValueBits) * 3;
  histogram.Record(huge);
  const HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(2u, snapshot.Count());
  EXPECT_EQ(0, snapshot.Min());
  EXPECT_EQ(huge, snapshot.Max());  // exact, even past the last bucket
  EXPECT_EQ(1u, snapshot.Saturated());
  EXPECT_EQ(huge, snapshot.ValueAtQuantile(1.0));  // clamped to max
}


TEST(Histogram, MergeEqualsRecordingTheUnion)
{
  std::mt19937_64 random(11);
  std::lognormal_distribution<double> distribution(12.0, 1.5);
  Histogram a{}, b{}, both{};
  for (int i = 0; i < 20000; i++)
  {
    const int64_t v = static_cast<int64_t>(distribution(random));
    ((i % 3 == 0) ? a : b).Record(v);
    both.Record(v);
  }
  HistogramSnapshot merged = a.Snapshot();
  merged.Merge(b.Snapshot());
  EXPECT_TRUE(merged == both.Snapshot());
  EXPECT_EQ(both.Snapshot().ValueAtQuantile(0.99), merged.ValueAtQuantile(0.99));

  HistogramSnapshot fromEmpty;
  fromEmpty.Merge(both.Snapshot());
  EXPECT_TRUE(fromEmpty == both.Snapshot());
  HistogramSnapshot unchanged = both.Snapshot();
  unchanged.Merge(HistogramSnapshot());
  EXPECT_TRUE(unchanged == both.Snapshot());
}


TEST(Histogram, MergingManyRangesKeepsEveryCountWhateverTheSlack)
{
  // Snapshots whose ranges stick out of the merged one by a few buckets at either end, as the
  // streams of a full table do: the merged range grows with slack, and compares equal to the
  // union recorded at once, whose range is exact.
  Histogram both{};
  HistogramSnapshot merged;
  for (int k = 0; k < 40; k++)
  {
    Histogram one{};
    const int64_t low = 1000000 - k * 9000;
    const int64_t high = 2000000 + k * 37000;
    for (int64_t v : {low, (low + high) / 2, high})
    {
      one.Record(v);
      both.Record(v);
    }
    one.AddTo(merged);
  }
  EXPECT_TRUE(merged == both.Snapshot());
  EXPECT_TRUE(both.Snapshot() == merged);
  for (double q : {0.0, 0.5, 0.9, 0.99, 1.0})
  {
    EXPECT_EQ(both.Snapshot().ValueAtQuantile(q), merged.ValueAtQuantile(q));
  }
  HistogramSnapshot other = both.Snapshot();
  other.Add(5);
  EXPECT_FALSE(merged == other);
}


TEST(Histogram, ResetForgetsEverything)
{
  Histogram histogram{};
  histogram.Record(123456);
  histogram.Reset();
  EXPECT_TRUE(histogram.Snapshot() == HistogramSnapshot());
  histogram.Record(7);
  EXPECT_EQ(7, histogram.Snapshot().Min());
  EXPECT_EQ(7, histogram.Snapshot().Max());
}


TEST(Histogram, ResetClearsEveryBucketThatHeldAValue)
{
  // Reset clears between min and max only: a later, wider range must find nothing left inside.
  Histogram histogram;
  histogram.Record(1000);
  histogram.Record(1000000000);
  histogram.Record(50000);
  histogram.Reset();
  histogram.Record(5);
  histogram.Record(2000000000);
  const HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(2u, snapshot.Count());
  EXPECT_EQ(5, snapshot.Min());
  EXPECT_EQ(2000000000, snapshot.Max());
  // A bucket left over inside the new range would move the top quantile down to it.
  EXPECT_EQ(2000000000, snapshot.ValueAtQuantile(1.0));
  Histogram fresh{};
  fresh.Record(5);
  fresh.Record(2000000000);
  EXPECT_TRUE(fresh.Snapshot() == snapshot);
}


TEST(Histogram, ConcurrentRecordingLosesNoCount)
{
  Histogram histogram{};
  constexpr int kThreads = 16;
  constexpr int kPerThread = 50000;
  std::vector<std::thread> threads;
  std::atomic<bool> stop{false};
  // A reader taking snapshots all along must only ever see bounded, consistent numbers.
  std::thread reader([&] {
    while (!stop.load())
    {
      const HistogramSnapshot snapshot = histogram.Snapshot();
      ASSERT_LE(snapshot.Count(), uint64_t(kThreads) * kPerThread);
      if (snapshot.Count() > 0)
      {
        ASSERT_LE(snapshot.ValueAtQuantile(0.5), snapshot.Max());
      }
    }
  });
  for (int t = 0; t < kThreads; t++)
  {
    threads.emplace_back([&histogram, t] {
      for (int i = 0; i < kPerThread; i++)
      {
        histogram.Record(1 + t * 1000 + (i % 997));
      }
    });
  }
  for (std::thread& thread : threads)
  {
    thread.join();
  }
  stop.store(true);
  reader.join();

  const HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(uint64_t(kThreads) * kPerThread, snapshot.Count());
  uint64_t expectedSum = 0;
  for (int t = 0; t < kThreads; t++)
  {
    for (int i = 0; i < kPerThread; i++)
    {
      expectedSum += 1 + t * 1000 + (i % 997);
    }
  }
  EXPECT_EQ(expectedSum, snapshot.Sum());
  EXPECT_EQ(1, snapshot.Min());
  EXPECT_EQ(1 + (kThreads - 1) * 1000 + 996, snapshot.Max());
}


TEST(Histogram, QuantilesInOnePassAreEachQuantile)
{
  std::mt19937_64 random(7);
  std::lognormal_distribution<double> durations(13.0, 2.0);
  const double levels[] = {0.0, 0.001, 0.5, 0.5, 0.9, 0.99, 0.999, 1.0};
  constexpr size_t kLevels = sizeof(levels) / sizeof(levels[0]);
  for (int round = 0; round < 50; round++)
  {
    Histogram histogram{};
    for (int i = random() % 2000; i > 0; i--)
    {
      histogram.Record(static_cast<int64_t>(durations(random)));
    }
    if (round % 10 == 0)
    {
      histogram.Record(int64_t(1) << 50);  // saturated
    }
    const HistogramSnapshot snapshot = histogram.Snapshot();
    int64_t values[kLevels];
    snapshot.ValuesAtQuantiles(levels, kLevels, values);
    for (size_t i = 0; i < kLevels; i++)
    {
      EXPECT_EQ(snapshot.ValueAtQuantile(levels[i]), values[i]) << "q=" << levels[i];
    }
  }
}


// A snapshot's bucket by index: its count inside the kept range, 0 outside it.
TEST(Histogram, BucketCountInsideAndOutsideTheKeptRange)
{
  Histogram histogram{};
  histogram.Record(1000);
  histogram.Record(1000);
  histogram.Record(50000);
  const HistogramSnapshot snapshot = histogram.Snapshot();
  EXPECT_EQ(2u, snapshot.BucketCount(Histogram::BucketIndex(1000)));
  EXPECT_EQ(1u, snapshot.BucketCount(Histogram::BucketIndex(50000)));
  EXPECT_EQ(0u, snapshot.BucketCount(Histogram::BucketIndex(1000) + 1));
  EXPECT_EQ(0u, snapshot.BucketCount(Histogram::BucketIndex(1000) - 1));
  EXPECT_EQ(0u, snapshot.BucketCount(Histogram::BucketIndex(50000) + 1));
  EXPECT_EQ(0u, HistogramSnapshot().BucketCount(0));
}
