#include "Correlation/DicomConnections.h"

#include "Platform/BoundedSpinLock.h"

#include <vector>

namespace IngestPerf
{
  void DicomConnections::Update(const Reading* open, size_t count, int64_t nowNs)
  {
    // One writer at a time changes the slots in place; a reader that sees a cookie sees the fields
    // written before it (release/acquire). A writer that finds another one at work leaves it the
    // update (the other reading is as recent).
    if (!BoundedSpinLock(updating_))
    {
      return;
    }
    for (Slot& slot : slots_)
    {
      const uint64_t cookie = slot.cookie.load(std::memory_order_relaxed);
      if (cookie == 0 || slot.closedNs.load(std::memory_order_relaxed) != 0)
      {
        continue;
      }
      bool stillOpen = false;
      for (size_t i = 0; i < count && !stillOpen; i++)
      {
        stillOpen = open[i].cookie == cookie;
      }
      if (!stillOpen)
      {
        slot.closedNs.store(nowNs, std::memory_order_release);
      }
    }
    for (size_t i = 0; i < count; i++)
    {
      bool known = false;
      for (const Slot& slot : slots_)
      {
        if (slot.cookie.load(std::memory_order_relaxed) == open[i].cookie)
        {
          known = true;
          break;
        }
      }
      if (known || open[i].cookie == 0)
      {
        continue;
      }
      // A free slot, else the one closed the longest ago (kept kKeepClosedNs when there is room).
      Slot* target = nullptr;
      for (Slot& slot : slots_)
      {
        if (slot.cookie.load(std::memory_order_relaxed) == 0)
        {
          target = &slot;
          break;
        }
        const int64_t closed = slot.closedNs.load(std::memory_order_relaxed);
        if (closed != 0 && (target == nullptr || closed < target->closedNs.load(std::memory_order_relaxed)))
        {
          target = &slot;
        }
      }
      if (target == nullptr)
      {
        continue;  // more open DICOM connections than slots: the others are not attributed
      }
      target->cookie.store(0, std::memory_order_release);  // readers skip it while it changes
      target->fd.store(open[i].fd, std::memory_order_relaxed);
      target->peer.store(open[i].peer, std::memory_order_relaxed);
      target->remoteAet.store(kUnidentified, std::memory_order_relaxed);
      target->openedNs.store(lastReadingNs_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      target->closedNs.store(0, std::memory_order_relaxed);
      target->cookie.store(open[i].cookie, std::memory_order_release);
    }
    lastReadingNs_.store(nowNs, std::memory_order_release);
    updating_.store(false, std::memory_order_release);
  }


  uint64_t DicomConnections::Attribute(LabelId peer, bool& stale) const
  {
    stale = false;
    if (peer == kOtherLabel || peer == kNoneLabel || peer == kUnidentified)
    {
      return 0;
    }
    uint64_t found = 0;
    for (const Slot& slot : slots_)
    {
      const uint64_t cookie = slot.cookie.load(std::memory_order_acquire);
      if (cookie == 0 || slot.closedNs.load(std::memory_order_relaxed) != 0 ||
          slot.peer.load(std::memory_order_relaxed) != peer)
      {
        continue;
      }
      if (found != 0)
      {
        return 0;  // several associations from that address at once: which one is not known
      }
      found = cookie;
    }
    stale = found == 0;  // none known yet: a new association the plugin's thread has not read
    return found;
  }


  void DicomConnections::SetRemoteAet(uint64_t cookie, LabelId remoteAet)
  {
    for (Slot& slot : slots_)
    {
      if (cookie != 0 && slot.cookie.load(std::memory_order_acquire) == cookie)
      {
        slot.remoteAet.store(remoteAet, std::memory_order_relaxed);
        return;
      }
    }
  }


  bool DicomConnections::IsOpen(uint64_t cookie) const
  {
    for (const Slot& slot : slots_)
    {
      if (cookie != 0 && slot.cookie.load(std::memory_order_acquire) == cookie)
      {
        return slot.closedNs.load(std::memory_order_acquire) == 0;
      }
    }
    return false;
  }


  size_t DicomConnections::OpenFrom(LabelId peer) const
  {
    size_t count = 0;
    for (const Slot& slot : slots_)
    {
      count += (slot.cookie.load(std::memory_order_acquire) != 0 &&
                slot.closedNs.load(std::memory_order_relaxed) == 0 && slot.peer.load(std::memory_order_relaxed) == peer)
                 ? 1
                 : 0;
    }
    return count;
  }


  bool DicomConnections::OnlyOpenAt(int64_t atNs, DicomConnection& connection) const
  {
    size_t found = 0;
    for (const Slot& slot : slots_)
    {
      const uint64_t cookie = slot.cookie.load(std::memory_order_acquire);
      const int64_t opened = slot.openedNs.load(std::memory_order_relaxed);
      const int64_t closed = slot.closedNs.load(std::memory_order_relaxed);
      if (cookie == 0 || opened > atNs || (closed != 0 && closed < atNs))
      {
        continue;
      }
      if (++found > 1)
      {
        return false;
      }
      connection = DicomConnection{cookie, slot.peer.load(std::memory_order_relaxed),
                                   slot.remoteAet.load(std::memory_order_relaxed), opened, closed};
    }
    return found == 1;
  }


  int64_t DicomConnections::OpenedNs(uint64_t cookie) const
  {
    for (const Slot& slot : slots_)
    {
      if (cookie != 0 && slot.cookie.load(std::memory_order_acquire) == cookie)
      {
        return slot.openedNs.load(std::memory_order_relaxed);
      }
    }
    return 0;
  }


  bool DicomConnections::AllClosedSince(int64_t atNs, LabelId remoteAet) const
  {
    for (const Slot& slot : slots_)
    {
      const uint64_t cookie = slot.cookie.load(std::memory_order_acquire);
      if (cookie == 0 || slot.closedNs.load(std::memory_order_relaxed) != 0 ||
          slot.openedNs.load(std::memory_order_relaxed) > atNs)
      {
        continue;  // closed, or opened after atNs
      }
      const LabelId aet = slot.remoteAet.load(std::memory_order_relaxed);
      if (remoteAet == kUnidentified || aet == kUnidentified || aet == remoteAet)
      {
        return false;  // may be its association, still open
      }
    }
    return true;
  }


  size_t DicomConnections::OpenCount() const
  {
    size_t count = 0;
    for (const Slot& slot : slots_)
    {
      count += (slot.cookie.load(std::memory_order_acquire) != 0 && slot.closedNs.load(std::memory_order_relaxed) == 0)
                 ? 1
                 : 0;
    }
    return count;
  }


  std::vector<DicomConnection> DicomConnections::Snapshot() const
  {
    std::vector<DicomConnection> result;
    for (const Slot& slot : slots_)
    {
      const uint64_t cookie = slot.cookie.load(std::memory_order_acquire);
      if (cookie != 0)
      {
        result.push_back(DicomConnection{
          cookie, slot.peer.load(std::memory_order_relaxed), slot.remoteAet.load(std::memory_order_relaxed),
          slot.openedNs.load(std::memory_order_relaxed), slot.closedNs.load(std::memory_order_relaxed)});
      }
    }
    return result;
  }
}
