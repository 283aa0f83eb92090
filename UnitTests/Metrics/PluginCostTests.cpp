#include "Metrics/PluginCost.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>

using namespace IngestPerf;


TEST(PluginCost, OneCallInThePeriodIsTimedOnEachThread)
{
  auto timedOf = [](uint32_t calls) {
    uint32_t timed = 0;
    for (uint32_t i = 0; i < calls; i++)
    {
      timed += PluginCost::SampleThisCall() ? 1 : 0;
    }
    return timed;
  };
  // A fresh thread starts its own count: exactly one timed call per full period, and the period
  // is prime so that it rotates through the 4 to 6 callbacks of an instance.
  for (uint32_t callbacksPerInstance = 2; callbacksPerInstance <= 8; callbacksPerInstance++)
  {
    EXPECT_NE(0u, PluginCost::kSamplingPeriod % callbacksPerInstance);
  }
  uint32_t timed = 0;
  std::thread([&] { timed = timedOf(10 * PluginCost::kSamplingPeriod); }).join();
  EXPECT_EQ(10u, timed);
  std::thread([&] { timed = timedOf(PluginCost::kSamplingPeriod - 1); }).join();
  EXPECT_EQ(0u, timed);
}


TEST(PluginCost, RareWorkIsCountedOnceAndLeavesTheCallThatMadeIt)
{
  PluginCost cost;
  int64_t taken = -1;
  std::thread([&] {
    cost.RecordApart(5000);
    cost.RecordApart(-3);  // a clock share larger than the reading: counted as 0, never negative
    taken = PluginCost::TakeApartNs();
  }).join();
  EXPECT_EQ(4997, taken);
  const PluginCostSnapshot snapshot = cost.Snapshot();
  EXPECT_EQ(2u, snapshot.apart.Count());
  EXPECT_EQ(5000u, snapshot.apart.Sum());
  EXPECT_EQ(5000u, snapshot.CallbacksNs());    // not times the sampling period
  cost.Record(Callback::StoredInstance, -10);  // the same for a timed call
  EXPECT_EQ(5000u, cost.Snapshot().CallbacksNs());
  cost.Reset();
  EXPECT_EQ(0u, cost.Snapshot().CallbacksNs());
}
