// A lock for critical sections of a few nanoseconds between at most two or three threads: spins
// a bounded number of times, then gives up so that a caller on Orthanc's ingest path never waits
// for more than about a microsecond. The caller counts the give-ups.
#pragma once

#include <atomic>

namespace IngestPerf
{
  inline bool BoundedSpinLock(std::atomic<bool>& locked)
  {
    for (int attempt = 0; attempt < 1000; attempt++)
    {
      if (!locked.load(std::memory_order_relaxed) && !locked.exchange(true, std::memory_order_acquire))
      {
        return true;
      }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    return false;
  }
}
