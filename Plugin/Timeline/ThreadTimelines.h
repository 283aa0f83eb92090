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
    // Instances in Orthanc's store: past ReceivedInstance (or the filter), not yet stored, failed or
    // concluded. Only records started since `sinceNs` of CountOpen (the last reset).
    uint64_t count = 0;
    int64_t oldestStartNs = 0;  // 0 when none
    // HTTP ingest requests whose body is being read: no instance yet.
    uint64_t receivingCount = 0;
    int64_t receivingOldestStartNs = 0;
    // Records still open that started before the last reset: in none of the figures above.
    uint64_t startedBeforeReset = 0;
    uint64_t threadsTracked = 0;
    uint64_t threadsUntracked = 0;
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

    // The records open now, those started before sinceNs apart.
    OpenRecords CountOpen(int64_t sinceNs = 0) const;

    // visit(threadNumber, timeline, view) for every thread that holds a slot and has a record open
    // (view: its timeline's Open()), from any thread: the timeline's Conclude() only. A thread may
    // leave its slot meanwhile (its number is then stale, its timeline reset: Conclude() refuses the
    // old view).
    void ForEachOpenRecord(const std::function<void(uint32_t threadNumber, InstanceTimeline& timeline,
                                                    const OpenRecordView& view)>& visit) const;

    // The records opened so far by the threads holding a slot: a number that moves whenever Orthanc
    // starts ingesting an instance or an upload, whatever becomes of it (the plugin's own thread
    // watches it to know that Orthanc is ingesting).
    uint64_t RecordsOpened() const;

    size_t Capacity() const;

    struct Slots;  // shared with the thread-local handles, which may outlive this object

  private:
    std::shared_ptr<Slots> slots_;
  };
}
