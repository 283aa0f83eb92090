#include "Platform/FaultInjection.h"

#include <gtest/gtest.h>

#include <new>
#include <string>

using namespace IngestPerf;


TEST(FaultInjection, ParsesTheEnvironmentVariable)
{
  FaultInjection::Settings settings;
  std::string error;
  ASSERT_TRUE(FaultInjection::Parse(settings, error, "sdk=0.2,alloc=0.1,seed=7"));
  EXPECT_DOUBLE_EQ(settings.sdk, 0.2);
  EXPECT_DOUBLE_EQ(settings.alloc, 0.1);
  EXPECT_EQ(settings.seed, 7u);

  ASSERT_TRUE(FaultInjection::Parse(settings, error, nullptr));
  EXPECT_EQ(settings.sdk, 0);
  EXPECT_EQ(settings.alloc, 0);
  ASSERT_TRUE(FaultInjection::Parse(settings, error, "alloc=1,"));
  EXPECT_EQ(settings.alloc, 1);

  for (const char* wrong : {"sdk=1.5", "sdk=-0.1", "sdk=", "sdk", "alloc=x", "seed=-", "seed=3x", "mem=0.1"})
  {
    EXPECT_FALSE(FaultInjection::Parse(settings, error, wrong)) << wrong;
    EXPECT_NE(error.find("INGEST_PERF_FAULTS"), std::string::npos);
  }
}


TEST(FaultInjection, DrawsAtTheConfiguredRateAndCountsWhatItInjects)
{
  FaultInjection::Settings settings;
  settings.sdk = 0.25;
  settings.alloc = 0.1;
  settings.seed = 7;
  FaultInjection::Configure(settings);
  uint64_t failed = 0;
  uint64_t thrown = 0;
  for (int i = 0; i < 20000; i++)
  {
    failed += FaultInjection::FailSdkCall() ? 1 : 0;
    try
    {
      FaultInjection::MaybeFailAllocation();
    }
    catch (const std::bad_alloc&)
    {
      thrown++;
    }
  }
  EXPECT_NEAR(static_cast<double>(failed) / 20000, 0.25, 0.02);
  EXPECT_NEAR(static_cast<double>(thrown) / 20000, 0.1, 0.02);
  EXPECT_EQ(FaultInjection::Injected().sdkCalls, failed);
  EXPECT_EQ(FaultInjection::Injected().allocations, thrown);

  // The same seed gives the same sequence (on one thread).
  FaultInjection::Configure(settings);
  uint64_t again = 0;
  for (int i = 0; i < 20000; i++)
  {
    again += FaultInjection::FailSdkCall() ? 1 : 0;
    try
    {
      FaultInjection::MaybeFailAllocation();
    }
    catch (const std::bad_alloc&)
    {
    }
  }
  EXPECT_EQ(again, failed);

  FaultInjection::Configure(FaultInjection::Settings());
  EXPECT_FALSE(FaultInjection::FailSdkCall());
  EXPECT_NO_THROW(FaultInjection::MaybeFailAllocation());
}
