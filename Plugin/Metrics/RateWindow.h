// Instances and bytes per second over the last minute, in a ring of per-second counters. Each
// counter packs the second it belongs to (24 bits) with its value (40 bits) in one atomic word,
// so recording is one compare-and-swap and a stale slot is never mistaken for a current one.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  class RateWindow
  {
  public:
    static constexpr int kMaxWindowSeconds = 60;

    struct Totals
    {
      uint64_t instances;
      uint64_t bytes;
    };

    RateWindow();

    void Record(int64_t second, uint64_t bytes);
    void Reset();

    // Sum over the `seconds` whole seconds before `nowSecond` (the current, partial second is
    // left out). seconds is clamped to [1, kMaxWindowSeconds].
    Totals Sum(int64_t nowSecond, int seconds) const;

  private:
    static constexpr size_t kSlots = 64;

    std::array<std::atomic<uint64_t>, kSlots> instances_;
    std::array<std::atomic<uint64_t>, kSlots> bytes_;
  };
}
