#include "Platform/ThreadClocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

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
  int fd = -1;
  ThreadClockReading first;
  ReadThreadClocks(fd, first);
  ASSERT_TRUE(first.HasCpu());
  // Some work on a CPU advances the CPU clock by about its duration.
  volatile uint64_t sink = 0;
  for (uint64_t i = 0; i < 20000000; i++)
  {
    sink = sink + i;
  }
  ThreadClockReading second;
  ReadThreadClocks(fd, second);
  EXPECT_GT(second.cpuNs, first.cpuNs);
  if (RunDelayUnavailableReason() == nullptr)
  {
    EXPECT_GE(fd, 0);  // opened once, kept
    ASSERT_TRUE(first.HasRunDelay());
    EXPECT_GE(second.runDelayNs, first.runDelayNs);
  }
  else
  {
    EXPECT_FALSE(second.HasRunDelay());
  }
  // Each thread reads its own: another thread's file is its own.
  std::thread other([] {
    int otherFd = -1;
    ThreadClockReading reading;
    ReadThreadClocks(otherFd, reading);
    EXPECT_TRUE(reading.HasCpu());
    EXPECT_LT(reading.cpuNs, 5000000000LL);
    CloseThreadClocks(otherFd);
    EXPECT_EQ(-1, otherFd);
  });
  other.join();
  CloseThreadClocks(fd);
}
