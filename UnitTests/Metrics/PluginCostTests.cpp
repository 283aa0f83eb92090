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


TEST(PluginCost, TheTimeInsideTheHooksIsSummedPerInstanceOnItsOwnThread)
{
  PluginCost cost;
  std::thread([&] {
    cost.AddInside(2000, false);  // the HTTP filter
    cost.AddInside(3000, false);  // the instance filter
    cost.AddInside(-7, false);    // a clock read backwards: counts nothing
    cost.AddInside(4000, true);   // OnStored: the instance's 9 us
  }).join();
  std::thread([&] {
    cost.AddInside(1000, false);  // another thread's instance is its own
    cost.AddInside(1000, true);
  }).join();
  PluginCostSnapshot snapshot = cost.Snapshot();
  ASSERT_EQ(2u, snapshot.insidePerInstance.Count());
  EXPECT_NEAR(8993.0, static_cast<double>(snapshot.insidePerInstance.Max()), 100.0);
  EXPECT_NEAR(2000.0, static_cast<double>(snapshot.insidePerInstance.Min()), 30.0);
  EXPECT_EQ(0u, snapshot.CallbacksNs());       // wall time, not the CPU time of the timed calls
  cost.Record(Callback::StoredInstance, -10);  // a clock share larger than the reading: counted as 0
  EXPECT_EQ(0u, cost.Snapshot().CallbacksNs());
  cost.Record(Callback::StoredInstance, 100);
  EXPECT_EQ(1700u, cost.Snapshot().CallbacksNs());  // times the sampling period
  cost.Reset();
  EXPECT_EQ(0u, cost.Snapshot().CallbacksNs());
  EXPECT_EQ(0u, cost.Snapshot().insidePerInstance.Count());
}
