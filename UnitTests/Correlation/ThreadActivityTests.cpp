#include "Correlation/ThreadActivity.h"

#include <gtest/gtest.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

using namespace IngestPerf;

namespace
{
  ThreadActivity Parse(const char* text)
  {
    return ParseThreadSyscall(text, strlen(text));
  }

  uint32_t Tid()
  {
    return static_cast<uint32_t>(::syscall(SYS_gettid));
  }

  // Reads the thread's activity until it is blocked in a system call (it may not be there yet).
  ThreadActivity WhenBlocked(uint32_t tid)
  {
    for (int i = 0; i < 400; i++)
    {
      const ThreadActivity activity = ReadThreadActivity(tid);
      if (activity.kind == ThreadActivity::Kind::Blocked)
      {
        return activity;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return ThreadActivity();
  }
}


TEST(ThreadActivity, ParsesTheKernelsLines)
{
  EXPECT_EQ(ThreadActivity::Kind::Running, Parse("running\n").kind);
  EXPECT_EQ(ThreadActivity::Kind::Faulted, Parse("-1 0x7ffe653a6378 0x7efc06bfc2ad\n").kind);
  // An idle DICOM worker of Orthanc 1.10.1, as read on Debian 12.
  const ThreadActivity futex =
    Parse("202 0x55923baf7878 0x89 0x0 0x7fdfd0835960 0x0 0xffffffff 0x7fdfd0835900 0x7fe0a1b2c3d4\n");
  ASSERT_EQ(ThreadActivity::Kind::Blocked, futex.kind);
  EXPECT_EQ(202, futex.number);
  uint64_t address = 0;
  bool timed = false;
  ASSERT_TRUE(futex.IsFutexWait(address, timed));
  EXPECT_EQ(0x55923baf7878u, address);
  EXPECT_TRUE(timed);
  // An idle civetweb worker: FUTEX_WAIT_BITSET | PRIVATE | CLOCK_REALTIME, no timeout.
  ASSERT_TRUE(Parse("202 0x55b357725b70 0x189 0x0 0x0 0x0 0xffffffff 0x7f 0x7f").IsFutexWait(address, timed));
  EXPECT_FALSE(timed);
  EXPECT_EQ(3, Parse("0 0x3 0x7efc06788000 0x20000 0x7efc06b13b60 0xffffffff 0x0 0x7ffe 0x7efc").WaitedDescriptor());
}


TEST(ThreadActivity, RefusesWhatIsNotALine)
{
  for (const char* text : {"", "run", "202", "202 0x1 0x2", "x 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8",
                           "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9", "202 0x11111111111111111 0 0 0 0 0 0 0",
                           "2022222 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8", "202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 zz"})
  {
    EXPECT_EQ(ThreadActivity::Kind::Unknown, Parse(text).kind) << text;
  }
  EXPECT_EQ(ThreadActivity::Kind::Unknown, ReadThreadActivity(0x7fffffff).kind);  // no such thread
}


TEST(ThreadActivity, AThreadInPollWaitsOnItsDescriptor)
{
  int pair[2];
  ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, pair));
  std::atomic<uint32_t> tid{0};
  std::thread waiter([&] {
    tid = Tid();
    pollfd wanted{pair[0], POLLIN, 0};
    poll(&wanted, 1, 5000);
  });
  while (tid == 0)
  {
    std::this_thread::yield();
  }
  const ThreadActivity activity = WhenBlocked(tid);
  EXPECT_EQ(pair[0], activity.WaitedDescriptor());
  ASSERT_EQ(1, write(pair[1], "x", 1));
  waiter.join();
  close(pair[0]);
  close(pair[1]);
}


TEST(ThreadActivity, ATimedAndAnUntimedWaitOnAConditionAreFutexWaits)
{
  std::mutex mutex;
  std::condition_variable condition;
  bool done = false;
  std::atomic<uint32_t> timedTid{0};
  std::atomic<uint32_t> untimedTid{0};
  std::thread timedWaiter([&] {
    timedTid = Tid();
    std::unique_lock<std::mutex> lock(mutex);
    while (!done)
    {
      condition.wait_until(lock, std::chrono::system_clock::now() + std::chrono::seconds(5));
    }
  });
  std::thread untimedWaiter([&] {
    untimedTid = Tid();
    std::unique_lock<std::mutex> lock(mutex);
    condition.wait(lock, [&] { return done; });
  });
  while (timedTid == 0 || untimedTid == 0)
  {
    std::this_thread::yield();
  }
  uint64_t timedAddress = 0;
  uint64_t untimedAddress = 0;
  bool timed = false;
  ASSERT_TRUE(WhenBlocked(timedTid).IsFutexWait(timedAddress, timed));
  EXPECT_TRUE(timed);
  ASSERT_TRUE(WhenBlocked(untimedTid).IsFutexWait(untimedAddress, timed));
  EXPECT_FALSE(timed);
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  condition.notify_all();
  timedWaiter.join();
  untimedWaiter.join();
}
