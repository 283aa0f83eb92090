#include "Metrics/TimeWindows.h"

#include "Metrics/StreamStats.h"
#include "Platform/MonotonicClock.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace IngestPerf
{
  namespace
  {
    struct WindowDefinition
    {
      const char* name;
      bool fine;  // the 10 s ring, else the 60 s one
      int fullSlots;
    };

    const WindowDefinition kWindows[kWindowCount] = {
      {"1m", true, 6}, {"5m", true, 30}, {"15m", false, 15}, {"1h", false, 60}};

    constexpr size_t kSlotsPerTransport = TimeWindows::kFineSlots + TimeWindows::kCoarseSlots;
  }


  const char* WindowName(Window window)
  {
    return kWindows[static_cast<size_t>(window)].name;
  }


  bool ParseWindow(Window& window, const char* name)
  {
    for (size_t w = 0; w < kWindowCount; w++)
    {
      if (strcmp(kWindows[w].name, name) == 0)
      {
        window = static_cast<Window>(w);
        return true;
      }
    }
    return false;
  }


  // All-zero memory is an empty slot of no epoch. Its figures' coarse histograms keep it small; a
  // window gives the parts' means only; its span is the time instances arrived in it.
  struct TimeWindows::Slot : StreamFigures<WindowHistogram>
  {
    // epoch + 1 when published, -(epoch + 1) while its claimer clears it, 0 when empty.
    std::atomic<int64_t> tag;
  };


  namespace
  {
    const TimeWindows::Ring kFine{TimeWindows::kFineSlotNs, TimeWindows::kFineSlots, 0};
    const TimeWindows::Ring kCoarse{TimeWindows::kCoarseSlotNs, TimeWindows::kCoarseSlots, TimeWindows::kFineSlots};
  }


  size_t TimeWindows::BytesPerSlot()
  {
    return sizeof(Slot);
  }


  size_t TimeWindows::BytesReserved()
  {
    return kTransportCount * kSlotsPerTransport * sizeof(Slot);
  }


  TimeWindows::TimeWindows(int64_t nowNs) :
    memory_(mmap(nullptr, BytesReserved(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)),
    resetNs_(nowNs),
    dropped_(0),
    straddled_(0)
  {
    if (memory_ == MAP_FAILED)
    {
      throw std::bad_alloc();
    }
  }


  TimeWindows::~TimeWindows()
  {
    munmap(memory_, BytesReserved());
  }


  TimeWindows::Slot& TimeWindows::SlotAt(Transport transport, size_t index) const
  {
    return static_cast<Slot*>(memory_)[static_cast<size_t>(transport) * kSlotsPerTransport + index];
  }


  int64_t TimeWindows::AwaitClaim(const Slot& slot, int64_t tag)
  {
    // Another writer is clearing this very slot for this very epoch (two records at the first
    // moment of a slot): a clear takes a few microseconds, so wait for it, within a bound, rather
    // than lose this record. Past the bound (its writer was preempted) the record is dropped.
    const int64_t deadlineNs = MonotonicNowNs() + kMaxClaimWaitNs;
    int64_t current = -tag;
    for (unsigned spin = 1; current == -tag; spin++)
    {
      current = slot.tag.load(std::memory_order_acquire);
      if (spin % 64 == 0 && MonotonicNowNs() > deadlineNs)
      {
        break;
      }
    }
    return current;
  }


  TimeWindows::Slot* TimeWindows::Claim(Transport transport, const Ring& ring, int64_t nowNs, int64_t& tag)
  {
    const int64_t epoch = std::max<int64_t>(0, nowNs) / ring.slotNs;
    Slot& slot = SlotAt(transport, ring.first + static_cast<size_t>(epoch) % ring.slots);
    tag = epoch + 1;
    int64_t current = slot.tag.load(std::memory_order_acquire);
    if (current == tag)
    {
      return &slot;
    }
    // Already a later epoch (this record is older than the ring): counting into another slot would
    // be wrong. Being cleared for another epoch: waiting would not be bounded.
    if (current < 0 || current > tag || !slot.tag.compare_exchange_strong(current, -tag, std::memory_order_acq_rel))
    {
      if (current == -tag)
      {
        current = AwaitClaim(slot, tag);
      }
      if (current == tag)
      {
        return &slot;  // claimed and published by another writer in between
      }
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    // A sequence lock's writer: the negated tag is visible before any cleared value.
    std::atomic_thread_fence(std::memory_order_release);
    slot.Reset();
    int64_t claimed = -tag;
    if (!slot.tag.compare_exchange_strong(claimed, tag, std::memory_order_release))
    {
      dropped_.fetch_add(1, std::memory_order_relaxed);  // a reset emptied the slot meanwhile
      return nullptr;
    }
    return &slot;
  }


  void TimeWindows::Release(const Slot& slot, int64_t tag)
  {
    if (slot.tag.load(std::memory_order_relaxed) != tag)
    {
      straddled_.fetch_add(1, std::memory_order_relaxed);  // the slot rotated (or was reset) under this record
    }
  }


  template <typename Record>
  void TimeWindows::RecordInSlots(Transport transport, int64_t nowNs, Record record)
  {
    for (const Ring* ring : {&kFine, &kCoarse})
    {
      int64_t tag = 0;
      if (Slot* slot = Claim(transport, *ring, nowNs, tag))
      {
        record(*slot);
        Release(*slot, tag);
      }
    }
  }


  void TimeWindows::RecordStored(Transport transport, int64_t nowNs, const InstanceMeasurement& measurement)
  {
    RecordInSlots(transport, nowNs, [&](Slot& slot) { slot.RecordStored(measurement); });
  }


  void TimeWindows::RecordOutcome(Transport transport, int64_t nowNs, Outcome outcome)
  {
    RecordInSlots(transport, nowNs, [&](Slot& slot) { slot.RecordOutcome(outcome); });
  }


  void TimeWindows::RecordPhase(Transport transport, int64_t nowNs, Phase phase, int64_t ns)
  {
    RecordInSlots(transport, nowNs, [&](Slot& slot) { slot.RecordPhase(phase, ns); });
  }


  void TimeWindows::RecordPhaseOf(Transport transport, int64_t nowNs, const InstanceMeasurement& measurement,
                                  Phase phase)
  {
    if (measurement.phaseNs[static_cast<size_t>(phase)] != InstanceMeasurement::kNotMeasured)
    {
      RecordInSlots(transport, nowNs, [&](Slot& slot) { slot.RecordPhaseOf(measurement, phase); });
    }
  }


  void TimeWindows::Count(Transport transport, int64_t nowNs, Counter counter)
  {
    RecordInSlots(transport, nowNs, [&](Slot& slot) { slot.Count(counter); });
  }


  void TimeWindows::Reset(int64_t nowNs)
  {
    for (size_t t = 0; t < kTransportCount; t++)
    {
      for (size_t i = 0; i < kSlotsPerTransport; i++)
      {
        std::atomic<int64_t>& tag = SlotAt(static_cast<Transport>(t), i).tag;
        if (tag.load(std::memory_order_relaxed) != 0)  // untouched memory stays untouched
        {
          tag.store(0, std::memory_order_release);
        }
      }
    }
    dropped_.store(0, std::memory_order_relaxed);
    straddled_.store(0, std::memory_order_relaxed);
    resetNs_.store(nowNs, std::memory_order_relaxed);
  }


  bool TimeWindows::ReadSlot(Transport transport, const Ring& ring, int64_t epoch, TransportSnapshot& target) const
  {
    const Slot& slot = SlotAt(transport, ring.first + static_cast<size_t>(epoch) % ring.slots);
    const int64_t tag = epoch + 1;
    if (slot.tag.load(std::memory_order_acquire) != tag)
    {
      return false;  // empty, being cleared, or another epoch: nothing of this window
    }
    TransportSnapshot part;
    slot.AddTo(part);
    // A sequence lock's reader: the values read above are checked against a later tag.
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.tag.load(std::memory_order_relaxed) != tag)
    {
      return false;  // rotated while read: it left the window, and may be half cleared
    }
    target.Merge(part);
    return true;
  }


  namespace
  {
    // The slots of a window at nowNs: [firstEpoch, nowEpoch], and how much of it is covered.
    struct WindowSpan
    {
      int64_t firstEpoch;
      int64_t nowEpoch;
      int64_t coveredNs;
    };

    WindowSpan SpanOf(const WindowDefinition& definition, const TimeWindows::Ring& ring, int64_t nowNs, int64_t resetNs)
    {
      const int64_t nowEpoch = std::max<int64_t>(0, nowNs) / ring.slotNs;
      const int64_t covered = nowNs - (nowEpoch - definition.fullSlots) * ring.slotNs;
      return {std::max<int64_t>(0, nowEpoch - definition.fullSlots), nowEpoch,
              std::max<int64_t>(0, std::min(covered, nowNs - resetNs))};
    }
  }


  WindowSnapshot TimeWindows::Snapshot(Window window, int64_t nowNs) const
  {
    const WindowDefinition& definition = kWindows[static_cast<size_t>(window)];
    const Ring& ring = definition.fine ? kFine : kCoarse;
    const WindowSpan span = SpanOf(definition, ring, nowNs, resetNs_.load(std::memory_order_relaxed));
    WindowSnapshot result;
    result.slotNs = ring.slotNs;
    result.fullSlots = definition.fullSlots;
    result.coveredNs = span.coveredNs;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      for (int64_t epoch = span.firstEpoch; epoch <= span.nowEpoch; epoch++)
      {
        ReadSlot(static_cast<Transport>(t), ring, epoch, result.transports[t]);
      }
    }
    result.droppedAtRotation = dropped_.load(std::memory_order_relaxed);
    result.straddledRotation = straddled_.load(std::memory_order_relaxed);
    return result;
  }


  WindowSlots TimeWindows::Slots(Window window, int64_t nowNs) const
  {
    const WindowDefinition& definition = kWindows[static_cast<size_t>(window)];
    const Ring& ring = definition.fine ? kFine : kCoarse;
    const int64_t resetNs = resetNs_.load(std::memory_order_relaxed);
    const WindowSpan span = SpanOf(definition, ring, nowNs, resetNs);
    WindowSlots result;
    result.slotNs = ring.slotNs;
    result.fullSlots = definition.fullSlots;
    result.coveredNs = span.coveredNs;
    result.slots.reserve(static_cast<size_t>(span.nowEpoch - span.firstEpoch + 1));
    for (int64_t epoch = span.firstEpoch; epoch <= span.nowEpoch; epoch++)
    {
      SlotSnapshot slot;
      slot.startNs = epoch * ring.slotNs;
      const int64_t from = std::max(slot.startNs, resetNs);
      const int64_t to = std::min(slot.startNs + ring.slotNs, nowNs);
      slot.coveredNs = std::max<int64_t>(0, to - from);
      for (size_t t = 0; t < kTransportCount; t++)
      {
        ReadSlot(static_cast<Transport>(t), ring, epoch, slot.transports[t]);
      }
      result.slots.push_back(std::move(slot));
    }
    result.droppedAtRotation = dropped_.load(std::memory_order_relaxed);
    result.straddledRotation = straddled_.load(std::memory_order_relaxed);
    return result;
  }
}
