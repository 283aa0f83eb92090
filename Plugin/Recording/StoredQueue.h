// What an OnStored leaves for the plugin's thread: the instance as the recorder decided it on
// Orthanc's thread (its labels, whether it was already stored, its pairing with its change), for
// the rest of its recording (durations, histograms, time windows, the association and the recent
// ring) to be done off Orthanc's locks. A bounded ring for many producers (Orthanc's storing
// threads) and one consumer at a time (the plugin's thread, or a route that must see every
// instance stored before it answers), after Dmitry Vyukov's bounded MPMC queue: a slot's sequence
// number says whether it is free or full, a producer claims one with a compare-exchange and never
// waits. Full, Push fails and the producer records the instance itself, as before.
#pragma once

#include "Correlation/ChangeCorrelator.h"
#include "Labels/InstanceLabels.h"
#include "Timeline/InstanceTimeline.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace IngestPerf
{
  struct StoredEntry
  {
    CompletedInstance instance;  // labels' strings cleared: they are borrowed from OnStored
    InstanceLabels labels;
    bool alreadyStored = false;
    bool transcodedWithoutHook = false;  // stored in another syntax than received, no transcoder seen
    ChangeCorrelator::Pairing pairing{false, 0, 0};
    uint32_t threadNumber = 0;     // the storing thread's, for the recent ring
    uint64_t connection = 0;       // C-STORE: its connection as the table knew it when stored (0: not known)
    bool connectionLater = false;  // C-STORE: named by the plugin's thread, after its connections' check
    char instanceId[48] = {0};     // Orthanc's ID (44 characters), "" if unknown
  };

  class StoredQueue
  {
  public:
    explicit StoredQueue(size_t capacity);  // rounded up to a power of two
    StoredQueue(const StoredQueue&) = delete;
    StoredQueue& operator=(const StoredQueue&) = delete;

    // Any thread: false when full. `position`: how many entries were pushed before this one.
    bool Push(const StoredEntry& entry, size_t& position);
    // One consumer at a time: false when empty.
    bool Pop(StoredEntry& entry);

    size_t Capacity() const { return mask_ + 1; }

  private:
    struct Slot
    {
      std::atomic<size_t> sequence;
      StoredEntry entry;
    };

    size_t mask_;
    std::unique_ptr<Slot[]> slots_;
    alignas(64) std::atomic<size_t> enqueue_{0};
    alignas(64) std::atomic<size_t> dequeue_{0};
  };
}
