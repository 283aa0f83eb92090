#include "Timeline/ThreadTimelines.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

namespace IngestPerf
{
  struct alignas(64) TimelineSlot
  {
    std::atomic<bool> taken{false};
    InstanceTimeline timeline;
  };

  struct ThreadTimelines::Slots
  {
    explicit Slots(size_t count) :
      slots(count)
    {
    }

    std::vector<TimelineSlot> slots;
    std::atomic<uint64_t> untrackedThreads{0};
  };

  namespace
  {
    // Owned by each thread; frees the slot at thread exit. Holding the shared_ptr keeps the
    // slots alive for threads that outlive the registry (a plugin being finalized).
    struct ThreadSlotHandle
    {
      std::shared_ptr<ThreadTimelines::Slots> owner;
      InstanceTimeline* timeline = nullptr;
      TimelineSlot* slot = nullptr;
      std::unique_ptr<InstanceTimeline> privateTimeline;

      void Release()
      {
        if (slot != nullptr)
        {
          // A fresh timeline for the next thread: nothing of this thread's state leaks into it.
          slot->timeline.Reset();
          slot->taken.store(false, std::memory_order_release);
        }
        slot = nullptr;
        timeline = nullptr;
        privateTimeline.reset();
        owner.reset();
      }

      ~ThreadSlotHandle() { Release(); }
    };

    thread_local ThreadSlotHandle threadHandle;

    // The hot path's copy of the handle: plain pointers, no constructor or destructor, in static
    // TLS (initial-exec), so that reading them is one load off the thread pointer instead of a call
    // to __tls_get_addr and the guard of a thread_local with a destructor. Set only together with
    // threadHandle, which keeps `fastOwner` alive while it is set.
    __attribute__((tls_model("initial-exec"))) thread_local const void* fastOwner = nullptr;
    __attribute__((tls_model("initial-exec"))) thread_local InstanceTimeline* fastTimeline = nullptr;
  }


  uint32_t CurrentThreadNumber()
  {
    static __attribute__((tls_model("initial-exec"))) thread_local uint32_t number = 0;
    if (number == 0)
    {
      number = static_cast<uint32_t>(syscall(SYS_gettid));
    }
    return number;
  }


  ThreadTimelines::ThreadTimelines(size_t maxThreads) :
    slots_(std::make_shared<Slots>(maxThreads))
  {
  }


  InstanceTimeline& ThreadTimelines::ForCurrentThread()
  {
    if (fastOwner == slots_.get())
    {
      return *fastTimeline;
    }
    ThreadSlotHandle& handle = threadHandle;
    if (handle.owner.get() == slots_.get() && handle.timeline != nullptr)
    {
      fastOwner = slots_.get();
      fastTimeline = handle.timeline;
      return *handle.timeline;
    }
    fastOwner = nullptr;

    handle.Release();
    handle.owner = slots_;
    for (TimelineSlot& slot : slots_->slots)
    {
      bool expected = false;
      if (!slot.taken.load(std::memory_order_relaxed) &&
          slot.taken.compare_exchange_strong(expected, true, std::memory_order_acquire))
      {
        handle.slot = &slot;
        handle.timeline = &slot.timeline;
        return *handle.timeline;
      }
    }
    slots_->untrackedThreads.fetch_add(1, std::memory_order_relaxed);
    handle.privateTimeline.reset(new InstanceTimeline());
    handle.timeline = handle.privateTimeline.get();
    return *handle.timeline;
  }


  OpenRecords ThreadTimelines::CountOpen(const std::function<int64_t()>& restRequestsInProgress) const
  {
    OpenRecords result{0, 0, 0, 0, 0, slots_->untrackedThreads.load(std::memory_order_relaxed), -1, {}};
    uint64_t endingCount = 0;
    int64_t endingOldestNs = 0;
    std::array<uint64_t, kOutcomeCount> ending{};
    for (const TimelineSlot& slot : slots_->slots)
    {
      if (!slot.taken.load(std::memory_order_acquire))
      {
        continue;
      }
      result.threadsTracked++;
      const OpenRecordView open = slot.timeline.Open();
      if (open.sinceNs == 0)
      {
        continue;
      }
      uint64_t& count = open.receiving ? result.receivingCount : open.endsWithRequest ? endingCount : result.count;
      int64_t& oldest = open.receiving         ? result.receivingOldestStartNs
                        : open.endsWithRequest ? endingOldestNs
                                               : result.oldestStartNs;
      count++;
      if (oldest == 0 || open.sinceNs < oldest)
      {
        oldest = open.sinceNs;
      }
      if (open.endsWithRequest)
      {
        ending[static_cast<size_t>(open.outcomeIfRequestEnded)]++;
      }
    }
    result.restRequestsInProgress = restRequestsInProgress ? restRequestsInProgress() : -1;
    if (result.restRequestsInProgress == 0)
    {
      result.endedWithRequest = ending;
    }
    else
    {
      result.count += endingCount;
      if (endingOldestNs != 0 && (result.oldestStartNs == 0 || endingOldestNs < result.oldestStartNs))
      {
        result.oldestStartNs = endingOldestNs;
      }
    }
    return result;
  }


  size_t ThreadTimelines::Capacity() const
  {
    return slots_->slots.size();
  }
}
