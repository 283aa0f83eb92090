// Timestamps for the hot path: clock_gettime through the vDSO, about 20 ns, no system call.
#pragma once

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
}
