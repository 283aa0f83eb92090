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
