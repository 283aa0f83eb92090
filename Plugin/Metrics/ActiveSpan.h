// When ingest was active, for a throughput: the first start and the last store of the instances
// recorded (monotonic ns, 0 before the first), kept with atomic minimum and maximum. The since-start
// figures (StreamStats) and each time-window slot (TimeWindows) keep one, so that a rate is over the
// time instances were arriving, not over the idle time before or after them.
#pragma once

#include "Metrics/StatsSnapshot.h"

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  struct ActiveSpan
  {
    std::atomic<int64_t> firstStartNs;  // no initializer: zeroed mapped memory is its empty state
    std::atomic<int64_t> lastStoredNs;

    // startNs 0: the instance's start is not known (no timeline): only its store counts.
    void Record(int64_t startNs, int64_t storedNs)
    {
      int64_t last = lastStoredNs.load(std::memory_order_relaxed);
      while (storedNs > last && !lastStoredNs.compare_exchange_weak(last, storedNs, std::memory_order_relaxed))
      {
      }
      if (startNs == 0)
      {
        return;
      }
      int64_t first = firstStartNs.load(std::memory_order_relaxed);
      while ((first == 0 || startNs < first) &&
             !firstStartNs.compare_exchange_weak(first, startNs, std::memory_order_relaxed))
      {
      }
    }

    void Clear()
    {
      firstStartNs.store(0, std::memory_order_relaxed);
      lastStoredNs.store(0, std::memory_order_relaxed);
    }

    void AddTo(TransportSnapshot& target) const
    {
      const int64_t first = firstStartNs.load(std::memory_order_relaxed);
      if (first != 0)
      {
        target.firstStartNs = target.firstStartNs == 0 ? first : std::min(target.firstStartNs, first);
      }
      target.lastStoredNs = std::max(target.lastStoredNs, lastStoredNs.load(std::memory_order_relaxed));
    }
  };
}
