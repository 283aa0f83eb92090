// One InstanceTimeline per thread, in a fixed array sized by configuration, so that readers can
// count the records in flight without touching thread-local storage of other threads. A thread
// claims a slot on its first event (the only non-trivial step, once per thread) and frees it
// when it exits. When every slot is taken, the thread gets a private timeline that works the
// same but is invisible to the in-flight count (reported as untracked threads).
#pragma once

#include "Timeline/InstanceTimeline.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace IngestPerf
{
  struct OpenRecords
  {
    uint64_t count;
    int64_t oldestStartNs;  // 0 when none
    uint64_t threadsTracked;
    uint64_t threadsUntracked;
  };

  class ThreadTimelines
  {
  public:
    explicit ThreadTimelines(size_t maxThreads);

    // Hot path: one thread-local load and a pointer compare once the thread has its slot.
    InstanceTimeline& ForCurrentThread();

    OpenRecords CountOpen() const;

    size_t Capacity() const;

    struct Slots;  // shared with the thread-local handles, which may outlive this object

  private:
    std::shared_ptr<Slots> slots_;
  };
}
