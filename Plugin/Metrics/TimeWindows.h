// The recent past of each transport: everything /perf/stats reports per transport (phase
// histograms, outcomes, counters, bytes) also kept in rotating time slots, merged by the reader
// into windows of 1 minute, 5 minutes, 15 minutes and 1 hour. Two rings per transport: 32 slots of
// 10 s (the 1m and 5m windows) and 64 slots of 60 s (15m and 1h). A window is the current, partial
// slot and the N full slots before it (1m: 6 x 10 s, 5m: 30 x 10 s, 15m: 15 x 60 s, 1h: 60 x 60 s),
// so its edges are exact to the slot and it covers N slots plus the part of the current one.
//
// Writers never wait unbounded: each slot carries its epoch (slot start / slot length, plus one) in
// an atomic. A writer that finds an older epoch claims the slot with a compare-and-swap to the
// negated epoch, clears it, and publishes the epoch; a writer that finds the slot being cleared for
// its own epoch waits for that (a few microseconds, at most kMaxClaimWaitNs); one that finds a
// slot being cleared for another epoch, or already holding a later epoch, or that waited in vain,
// drops its record and counts it (droppedAtRotation); a writer whose
// slot changed epoch while it recorded (it was stalled for the length of the ring) counts it
// (straddledRotation). Readers read a slot only while it holds the epoch they expect, and check
// it again after reading (a sequence lock's reader): a half-cleared slot is never counted. Slots()
// reads the same slots the same way, one by one instead of merged.
//
// The slots are histograms of WindowHistogram (8 buckets per power of two), reserved as address
// space the kernel backs only where written: see BytesReserved().
#pragma once

#include "Metrics/ActiveSpan.h"
#include "Metrics/InstanceMeasurement.h"
#include "Metrics/StatsSnapshot.h"
#include "Metrics/WindowHistogram.h"
#include "Platform/MappedAllocator.h"
#include "Vocabulary/IngestVocabulary.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace IngestPerf
{
  enum class Window
  {
    OneMinute,
    FiveMinutes,
    FifteenMinutes,
    OneHour,
    Count
  };
  constexpr size_t kWindowCount = static_cast<size_t>(Window::Count);

  // "1m", "5m", "15m", "1h".
  const char* WindowName(Window window);
  bool ParseWindow(Window& window, const char* name);

  struct WindowSnapshot
  {
    std::array<TransportSnapshot, kTransportCount> transports;  // active span (ActiveSpan), no rate windows
    int64_t slotNs = 0;
    int fullSlots = 0;
    // The current slot's elapsed part and the full slots, no longer than since the last reset.
    int64_t coveredNs = 0;
    uint64_t droppedAtRotation = 0;  // since the last reset, all rings
    uint64_t straddledRotation = 0;
  };

  // One slot of a window, as Slots() reads it: its figures alone, not merged with the others.
  struct SlotSnapshot
  {
    int64_t startNs = 0;    // monotonic, the slot's first nanosecond
    int64_t coveredNs = 0;  // the part of the slot before now and after the last reset (0: none of it)
    // The outcomes, counters, byte and phase histograms and the active span: no rate windows.
    std::array<TransportSnapshot, kTransportCount> transports;
  };

  // The slots of a window, oldest first: its N full slots and the current one, each on its own.
  struct WindowSlots
  {
    int64_t slotNs = 0;
    int fullSlots = 0;
    int64_t coveredNs = 0;  // as WindowSnapshot::coveredNs: the sum of the slots' coveredNs
    std::vector<SlotSnapshot, MappedAllocator<SlotSnapshot>> slots;  // 61 slots of an hour: 270 KB
    uint64_t droppedAtRotation = 0;
    uint64_t straddledRotation = 0;
  };

  class TimeWindows
  {
  public:
    static constexpr int64_t kFineSlotNs = 10 * int64_t(1000000000);
    static constexpr size_t kFineSlots = 32;
    static constexpr int64_t kCoarseSlotNs = 60 * int64_t(1000000000);
    static constexpr size_t kCoarseSlots = 64;

    explicit TimeWindows(int64_t nowNs);
    ~TimeWindows();
    TimeWindows(const TimeWindows&) = delete;
    TimeWindows& operator=(const TimeWindows&) = delete;

    // nowNs: monotonic time of the event; every call records into both rings.
    void RecordStored(Transport transport, int64_t nowNs, const InstanceMeasurement& measurement);
    void RecordOutcome(Transport transport, int64_t nowNs, Outcome outcome);
    void RecordPhase(Transport transport, int64_t nowNs, Phase phase, int64_t ns);
    // One phase of an instance's measurement, with its parts if it was split.
    void RecordPhaseOf(Transport transport, int64_t nowNs, const InstanceMeasurement& measurement, Phase phase);
    void Count(Transport transport, int64_t nowNs, Counter counter);

    // Every slot emptied (its epoch forgotten: the next writer clears it), nothing before nowNs counted.
    void Reset(int64_t nowNs);

    WindowSnapshot Snapshot(Window window, int64_t nowNs) const;
    // The same slots as Snapshot(window, nowNs), each kept apart: the window over time. A slot
    // that rotated while it was read (it left the window meanwhile) is empty in the answer.
    WindowSlots Slots(Window window, int64_t nowNs) const;

    static size_t BytesPerSlot();
    static size_t BytesReserved();

    struct Ring
    {
      int64_t slotNs;
      size_t slots;
      size_t first;  // index of its first slot in the transport's block
    };

  private:
    struct Slot;

    Slot* Claim(Transport transport, const Ring& ring, int64_t nowNs, int64_t& tag);
    static constexpr int64_t kMaxClaimWaitNs = 200000;  // a clear is a few microseconds
    static int64_t AwaitClaim(const Slot& slot, int64_t tag);
    void Release(const Slot& slot, int64_t tag);
    // Runs record(slot) on the transport's current slot of each ring, claimed and released.
    template <typename Record>
    void RecordInSlots(Transport transport, int64_t nowNs, Record record);
    Slot& SlotAt(Transport transport, size_t index) const;
    // A sequence lock's reader: adds the slot of `epoch` to `target` if it holds that epoch before
    // and after being read; false (nothing added) when it is empty, being cleared or of another epoch.
    bool ReadSlot(Transport transport, const Ring& ring, int64_t epoch, TransportSnapshot& target) const;

    void* memory_;
    std::atomic<int64_t> resetNs_;
    std::atomic<uint64_t> dropped_;
    std::atomic<uint64_t> straddled_;
  };
}
