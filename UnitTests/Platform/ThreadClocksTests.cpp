#include "Platform/ThreadClocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include <unistd.h>

using namespace IngestPerf;

TEST(ThreadClocks, TheRunDelayIsTheSecondNumberOfSchedstat)
{
  int64_t delay = -1;
  const char* text = "346923018 97314604 52\n";
  ASSERT_TRUE(ParseSchedstatRunDelay(text, strlen(text), delay));
  EXPECT_EQ(97314604, delay);
  ASSERT_TRUE(ParseSchedstatRunDelay("1 0 0", 5, delay));
  EXPECT_EQ(0, delay);
  EXPECT_FALSE(ParseSchedstatRunDelay("0 0 0\n", 6, delay));  // a kernel whose sched_info is off
  for (const char* wrong : {"", "1 2", "1 2 3 4", "a 2 3\n", "1  2 3\n", "-1 2 3\n", "1 2 3x", " 1 2 3\n",
                            "99999999999999999999 1 1\n", "1 2 3\n\n", "1 2 369\n 2 3 4"})
  {
    EXPECT_FALSE(ParseSchedstatRunDelay(wrong, strlen(wrong), delay)) << wrong;
  }
}

TEST(ThreadClocks, AThreadReadsItsOwnCpuTimeAndRunDelay)
{
  ThreadClockReading first;
  ReadThreadClocks(first);
  ASSERT_TRUE(first.HasCpu());
  // Some work on a CPU advances the CPU clock by about its duration.
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20000000; i++)
  {
    sink = sink + i;
  }
  ThreadClockReading second;
  ReadThreadClocks(second);
  EXPECT_GT(second.cpuNs, first.cpuNs);
  if (RunDelayUnavailableReason() == nullptr)
  {
    ASSERT_TRUE(first.HasRunDelay());
    EXPECT_GE(second.runDelayNs, first.runDelayNs);
  }
  else
  {
    EXPECT_FALSE(second.HasRunDelay());
  }
  // Each thread reads its own clocks: a new thread's CPU time is its own, not the process's.
  std::thread other([&first] {
    ThreadClockReading reading;
    ReadThreadClocks(reading);
    EXPECT_TRUE(reading.HasCpu());
    EXPECT_LT(reading.cpuNs, first.cpuNs + 20000000LL);
  });
  other.join();
}

TEST(ThreadClocks, AReadingLeavesNoDescriptorOpen)
{
  // Every descriptor the plugin holds is listed at each reading of Orthanc's sockets.
  const int before = dup(0);
  ASSERT_GE(before, 0);
  close(before);
  ThreadClockReading reading;
  ReadThreadClocks(reading);
  const int after = dup(0);
  ASSERT_GE(after, 0);
  close(after);
  EXPECT_EQ(before, after);  // the lowest free descriptor is the same
}
