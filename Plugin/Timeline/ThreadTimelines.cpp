#include "Timeline/ThreadTimelines.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

namespace IngestPerf
{
  struct alignas(64) TimelineSlot
  {
    std::atomic<bool> taken{false};
    std::atomic<uint32_t> threadNumber{0};  // the kernel's id of the thread holding it
    InstanceTimeline timeline;
  };

  struct ThreadTimelines::Slots
  {
    explicit Slots(size_t count) :
      slots(count)
    {
    }

    // The slots below `inUse` are those ever claimed (a thread claims the lowest free one): the
    // readers, the plugin's thread once a second among them, walk these only, not every slot of
    // MaxThreads (512 by default, against the 60 or so threads of an Orthanc that ingests).
    size_t InUse() const { return std::min(inUse.load(std::memory_order_acquire), slots.size()); }

    std::vector<TimelineSlot> slots;
    std::atomic<size_t> inUse{0};
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
          slot->threadNumber.store(0, std::memory_order_relaxed);
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

    // The hot path's copy of the handle: plain pointers, no constructor or destructor, so that
    // reading them skips the guard of a thread_local with a destructor. Set only together with
    // threadHandle, which keeps `fastOwner` alive while it is set. The library's TLS model is the
    // default one of a library that is dlopen'ed: initial-exec TLS would take the static TLS room
    // glibc keeps for such libraries, which a plugin loaded after this one may need.
    thread_local const void* fastOwner = nullptr;
    thread_local InstanceTimeline* fastTimeline = nullptr;
  }


  uint32_t CurrentThreadNumber()
  {
    static thread_local uint32_t number = 0;
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
    std::vector<TimelineSlot>& slots = slots_->slots;
    for (size_t i = 0; i < slots.size(); i++)
    {
      TimelineSlot& slot = slots[i];
      bool expected = false;
      if (!slot.taken.load(std::memory_order_relaxed) &&
          slot.taken.compare_exchange_strong(expected, true, std::memory_order_acquire))
      {
        slot.threadNumber.store(CurrentThreadNumber(), std::memory_order_relaxed);
        // Before the thread's first event: a reader that sees the event sees the slot.
        size_t inUse = slots_->inUse.load(std::memory_order_relaxed);
        while (inUse < i + 1 &&
               !slots_->inUse.compare_exchange_weak(inUse, i + 1, std::memory_order_release, std::memory_order_relaxed))
        {
        }
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


  OpenRecords ThreadTimelines::CountOpen(int64_t sinceNs) const
  {
    OpenRecords result;
    result.threadsUntracked = slots_->untrackedThreads.load(std::memory_order_relaxed);
    const size_t inUse = slots_->InUse();
    for (size_t i = 0; i < inUse; i++)
    {
      const TimelineSlot& slot = slots_->slots[i];
      if (!slot.taken.load(std::memory_order_acquire))
      {
        continue;
      }
      result.threadsTracked++;
      const OpenRecordView open = slot.timeline.Open();
      if (open.handle == 0)
      {
        continue;
      }
      if (open.sinceNs < sinceNs)
      {
        result.startedBeforeReset++;
        continue;
      }
      const bool receiving = open.stage == RecordStage::Receiving;
      uint64_t& count = receiving ? result.receivingCount : result.count;
      int64_t& oldest = receiving ? result.receivingOldestStartNs : result.oldestStartNs;
      count++;
      if (oldest == 0 || open.sinceNs < oldest)
      {
        oldest = open.sinceNs;
      }
    }
    return result;
  }


  void ThreadTimelines::ForEachOpenRecord(const std::function<void(uint32_t threadNumber, InstanceTimeline& timeline,
                                                                   const OpenRecordView& view)>& visit) const
  {
    const size_t inUse = slots_->InUse();
    for (size_t i = 0; i < inUse; i++)
    {
      TimelineSlot& slot = slots_->slots[i];
      if (!slot.taken.load(std::memory_order_acquire) || !slot.timeline.MayHaveOpenRecord())
      {
        continue;
      }
      const OpenRecordView view = slot.timeline.Open();
      if (view.handle != 0)
      {
        visit(slot.threadNumber.load(std::memory_order_relaxed), slot.timeline, view);
      }
    }
  }


  uint64_t ThreadTimelines::RecordsOpened() const
  {
    uint64_t total = 0;
    const size_t inUse = slots_->InUse();
    for (size_t i = 0; i < inUse; i++)
    {
      total += slots_->slots[i].timeline.RecordsOpened();
    }
    return total;
  }


  size_t ThreadTimelines::Capacity() const
  {
    return slots_->slots.size();
  }
}
