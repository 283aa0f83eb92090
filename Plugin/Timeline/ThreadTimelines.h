// One InstanceTimeline per thread, in a fixed array sized by configuration, so that readers can
// count the records in flight without touching thread-local storage of other threads. A thread
// claims a slot on its first event (the only non-trivial step, once per thread) and frees it
// when it exits. When every slot is taken, the thread gets a private timeline that works the
// same but is invisible to the in-flight count (reported as untracked threads).
#pragma once

#include "Timeline/InstanceTimeline.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace IngestPerf
{
  struct OpenRecords
  {
    // Instances in Orthanc's store: past ReceivedInstance (or the filter), not yet stored.
    uint64_t count;
    int64_t oldestStartNs;  // 0 when none
    // HTTP ingest requests without an instance yet (uploading, or refused before any instance).
    uint64_t receivingCount;
    int64_t receivingOldestStartNs;
    uint64_t threadsTracked;
    uint64_t threadsUntracked;
    // REST API requests Orthanc had in progress, besides the reader's own, after the records were
    // read; -1 when Orthanc cannot say (its metrics are disabled).
    int64_t restRequestsInProgress;
    // When that is 0, every record of a REST request is over (its thread has not served another
    // request yet, which would have closed it): those are here by outcome, and not in count.
    std::array<uint64_t, kOutcomeCount> endedWithRequest;
  };

  // The kernel's id of the calling thread (gettid), read once per thread and cached: what a trace
  // shows as the thread of an instance, the same number as in top -H, perf or gdb.
  uint32_t CurrentThreadNumber();

  class ThreadTimelines
  {
  public:
    explicit ThreadTimelines(size_t maxThreads);

    // Hot path: one thread-local load and a pointer compare once the thread has its slot.
    InstanceTimeline& ForCurrentThread();

    // restRequestsInProgress is asked after the records are read (a request that ends in between
    // is then seen over; one that starts in between has no record yet among those read).
    OpenRecords CountOpen(const std::function<int64_t()>& restRequestsInProgress = nullptr) const;

    size_t Capacity() const;

    struct Slots;  // shared with the thread-local handles, which may outlive this object

  private:
    std::shared_ptr<Slots> slots_;
  };
}
