// Timestamps for the hot path: clock_gettime through the vDSO, about 20-35 ns, no system call.
// ThreadCpuNowNs is a system call (no vDSO for CPU clocks, about 400 ns of CPU here): for sampled
// calls and the plugin's own thread only (Metrics/PluginCost).
#pragma once

#include <algorithm>
#include <cstdint>
#include <ctime>

namespace IngestPerf
{
  inline int64_t MonotonicNowNs()
  {
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  }

  inline int64_t WallNowNs()
  {
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  }

  // The CPU time of the calling thread (user and system): what a preemption does not advance.
  inline int64_t ThreadCpuNowNs()
  {
    timespec now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  }

  // What an interval between two reads of ThreadCpuNowNs measures when nothing runs in between (the
  // smallest of a few back-to-back pairs, measured once): the clock's own share, taken out of each
  // timed call.
  inline int64_t ThreadCpuClockShareNs()
  {
    static const int64_t share = [] {
      int64_t smallest = INT64_MAX;
      for (int i = 0; i < 16; i++)
      {
        const int64_t first = ThreadCpuNowNs();
        smallest = std::min(smallest, ThreadCpuNowNs() - first);
      }
      return std::max<int64_t>(0, smallest);
    }();
    return share;
  }
}
