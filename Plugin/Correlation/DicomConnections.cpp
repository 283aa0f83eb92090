#include "Correlation/DicomConnections.h"

#include "Platform/BoundedSpinLock.h"

#include <algorithm>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    // Whether a connection may have been open at atNs: opened after a reading before it (openedNs is
    // the reading before the one that first saw it) and not seen gone before it.
    bool MayBeOpenAt(int64_t openedNs, int64_t closedNs, int64_t atNs)
    {
      return openedNs <= atNs && (closedNs == 0 || closedNs > atNs);
    }
  }


  bool DicomConnections::ReadSlot(const Slot& slot, DicomConnection& view)
  {
    // The writer sets the cookie to 0, fences, writes the fields, then publishes the new cookie
    // (release). The reader reads the cookie (acquire), the fields, fences (acquire) and reads the
    // cookie again: the same cookie, the fields are that record's (a seqlock, as in Linux's and
    // Boehm's "Can seqlocks get along with programming language memory models?", 2012). closedNs may
    // still move on its own while the record stays (CheckOpen): a reader sees it closed or not yet.
    const uint64_t cookie = slot.cookie.load(std::memory_order_acquire);
    if (cookie == 0)
    {
      return false;
    }
    view.cookie = cookie;
    view.peer = slot.peer.load(std::memory_order_relaxed);
    view.remoteAet = slot.remoteAet.load(std::memory_order_relaxed);
    view.openedNs = slot.openedNs.load(std::memory_order_relaxed);
    view.closedNs = slot.closedNs.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return slot.cookie.load(std::memory_order_relaxed) == cookie;
  }


  void DicomConnections::Update(const Reading* open, size_t count, int64_t nowNs)
  {
    // One writer at a time changes the slots in place (a seqlock: ReadSlot). A writer that finds
    // another one at work leaves it the update (the other reading is as recent).
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
        slot.closedNs.store(ClosedAt(slot, nowNs), std::memory_order_release);
      }
      else
      {
        slot.seenOpenNs.store(nowNs, std::memory_order_relaxed);
      }
    }
    if (peersStale_.exchange(false, std::memory_order_acq_rel))
    {
      // The label ids were forgotten (a reset): each known connection's address, as interned now.
      for (Slot& slot : slots_)
      {
        const uint64_t cookie = slot.cookie.load(std::memory_order_relaxed);
        for (size_t i = 0; i < count && cookie != 0; i++)
        {
          if (open[i].cookie == cookie && slot.peer.load(std::memory_order_relaxed) != open[i].peer)
          {
            slot.cookie.store(0, std::memory_order_relaxed);  // readers skip it while it changes
            std::atomic_thread_fence(std::memory_order_release);
            slot.peer.store(open[i].peer, std::memory_order_relaxed);
            slot.cookie.store(cookie, std::memory_order_release);
          }
        }
      }
    }
    std::vector<bool> knownBefore(count);  // the plugin's thread: a reading's worth of flags
    for (size_t i = 0; i < count; i++)
    {
      knownBefore[i] = IsOpen(open[i].cookie);
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
      target->cookie.store(0, std::memory_order_relaxed);   // readers skip it while it changes
      std::atomic_thread_fence(std::memory_order_release);  // ... and no field is seen before the 0
      target->fd.store(open[i].fd, std::memory_order_relaxed);
      target->peer.store(open[i].peer, std::memory_order_relaxed);
      // The AET of an instance stored on it before it was read, if it is the one new from its peer.
      LabelId aet = kUnidentified;
      size_t newFromPeer = 0;
      for (size_t j = 0; j < count; j++)
      {
        newFromPeer += (open[j].peer == open[i].peer && !knownBefore[j]) ? 1 : 0;
      }
      for (PendingAet& pending : pendingAets_)
      {
        if (newFromPeer == 1 && pending.peer.load(std::memory_order_relaxed) == open[i].peer)
        {
          aet = pending.remoteAet.load(std::memory_order_relaxed);
          pending.peer.store(kUnidentified, std::memory_order_relaxed);
        }
      }
      target->remoteAet.store(aet, std::memory_order_relaxed);
      target->openedNs.store(lastReadingNs_.load(std::memory_order_relaxed), std::memory_order_relaxed);
      target->closedNs.store(0, std::memory_order_relaxed);
      target->seenOpenNs.store(nowNs, std::memory_order_relaxed);
      target->storedNs.store(0, std::memory_order_relaxed);
      target->cookie.store(open[i].cookie, std::memory_order_release);
    }
    readings_[nextReading_++ % kReadings].store(nowNs, std::memory_order_relaxed);
    lastReadingNs_.store(nowNs, std::memory_order_release);
    updating_.store(false, std::memory_order_release);
  }


  bool DicomConnections::ReadBetween(int64_t fromNs, int64_t toNs) const
  {
    for (const std::atomic<int64_t>& reading : readings_)
    {
      const int64_t at = reading.load(std::memory_order_relaxed);
      if (at > fromNs && at <= toNs)
      {
        return true;
      }
    }
    return false;
  }


  size_t DicomConnections::CheckOpen(int64_t nowNs, CookieOf cookieOf)
  {
    if (!BoundedSpinLock(updating_))
    {
      return 0;
    }
    size_t closed = 0;
    for (Slot& slot : slots_)
    {
      const uint64_t cookie = slot.cookie.load(std::memory_order_relaxed);
      if (cookie == 0 || slot.closedNs.load(std::memory_order_relaxed) != 0)
      {
        continue;
      }
      if (cookieOf(slot.fd.load(std::memory_order_relaxed)) != cookie)
      {
        slot.closedNs.store(ClosedAt(slot, nowNs), std::memory_order_release);
        closed++;
      }
      else
      {
        slot.seenOpenNs.store(nowNs, std::memory_order_relaxed);
      }
    }
    updating_.store(false, std::memory_order_release);
    return closed;
  }


  uint64_t DicomConnections::Attribute(LabelId peer, LabelId remoteAet, int64_t atNs, bool& stale) const
  {
    stale = false;
    if (peer == kOtherLabel || peer == kNoneLabel || peer == kUnidentified)
    {
      return 0;
    }
    uint64_t found = 0;
    LabelId foundAet = kUnidentified;
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      if (!ReadSlot(slot, view) || view.peer != peer || !MayBeOpenAt(view.openedNs, view.closedNs, atNs))
      {
        continue;
      }
      if (found != 0)
      {
        return 0;  // several associations from that address at once: which one is not known
      }
      found = view.cookie;
      foundAet = view.remoteAet;
    }
    if (found != 0 && remoteAet != kUnidentified && foundAet != kUnidentified && foundAet != remoteAet)
    {
      found = 0;  // another sender's association: this one's is newer than the last reading
    }
    stale = found == 0;  // none known yet: a new association the plugin's thread has not read
    return found;
  }


  int64_t DicomConnections::ClosedAt(const Slot& slot, int64_t nowNs)
  {
    const int64_t known =
      std::max(slot.seenOpenNs.load(std::memory_order_relaxed), slot.storedNs.load(std::memory_order_relaxed));
    return std::min(nowNs, known + 1);
  }


  void DicomConnections::SetRemoteAet(uint64_t cookie, LabelId remoteAet, int64_t storedNs)
  {
    for (Slot& slot : slots_)
    {
      if (cookie != 0 && slot.cookie.load(std::memory_order_acquire) == cookie)
      {
        slot.remoteAet.store(remoteAet, std::memory_order_relaxed);
        if (storedNs > slot.storedNs.load(std::memory_order_relaxed))
        {
          slot.storedNs.store(storedNs, std::memory_order_relaxed);
        }
        return;
      }
    }
  }


  void DicomConnections::SetRemoteAetBeforeReading(LabelId peer, LabelId remoteAet)
  {
    PendingAet& pending = pendingAets_[nextPendingAet_.fetch_add(1, std::memory_order_relaxed) % kPendingAets];
    pending.remoteAet.store(remoteAet, std::memory_order_relaxed);
    pending.peer.store(peer, std::memory_order_relaxed);
  }


  bool DicomConnections::IsOpen(uint64_t cookie, int64_t atNs) const
  {
    for (const Slot& slot : slots_)
    {
      if (cookie != 0 && slot.cookie.load(std::memory_order_acquire) == cookie)
      {
        const int64_t closed = slot.closedNs.load(std::memory_order_acquire);
        return closed == 0 || closed > atNs;
      }
    }
    return false;
  }


  size_t DicomConnections::OpenFrom(LabelId peer, int64_t atNs) const
  {
    size_t count = 0;
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      count += (ReadSlot(slot, view) && view.peer == peer && MayBeOpenAt(view.openedNs, view.closedNs, atNs)) ? 1 : 0;
    }
    return count;
  }


  bool DicomConnections::OnlyOpenAt(int64_t atNs, DicomConnection& connection) const
  {
    size_t found = 0;
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      if (!ReadSlot(slot, view) || view.openedNs > atNs || (view.closedNs != 0 && view.closedNs < atNs))
      {
        continue;
      }
      if (++found > 1)
      {
        return false;
      }
      connection = view;
    }
    return found == 1;
  }


  int64_t DicomConnections::OpenedNs(uint64_t cookie) const
  {
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      if (cookie != 0 && ReadSlot(slot, view) && view.cookie == cookie)
      {
        return view.openedNs;
      }
    }
    return 0;
  }


  bool DicomConnections::AllClosedSince(int64_t atNs, LabelId remoteAet) const
  {
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      if (!ReadSlot(slot, view) || view.closedNs != 0 || view.openedNs > atNs)
      {
        continue;  // closed, or opened after atNs
      }
      const LabelId aet = view.remoteAet;
      if (remoteAet == kUnidentified || aet == kUnidentified || aet == remoteAet)
      {
        return false;  // may be its association, still open
      }
    }
    return true;
  }


  uint64_t DicomConnections::OnlyOneFromAt(LabelId peer, int64_t atNs) const
  {
    uint64_t found = 0;
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      if (!ReadSlot(slot, view) || view.peer != peer || view.openedNs > atNs ||
          (view.closedNs != 0 && view.closedNs < atNs))
      {
        continue;
      }
      if (found != 0)
      {
        return 0;
      }
      found = view.cookie;
    }
    return found;
  }


  bool DicomConnections::AnyOpenSince(int64_t atNs, LabelId peer, int64_t untilNs) const
  {
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      if (ReadSlot(slot, view) && (view.closedNs == 0 || view.closedNs > untilNs) && view.peer == peer &&
          view.openedNs <= atNs)
      {
        return true;
      }
    }
    return false;
  }


  void DicomConnections::ForgetLabels()
  {
    for (Slot& slot : slots_)
    {
      slot.remoteAet.store(kUnidentified, std::memory_order_relaxed);
    }
    for (PendingAet& pending : pendingAets_)
    {
      pending.peer.store(kUnidentified, std::memory_order_relaxed);
    }
    peersStale_.store(true, std::memory_order_release);
  }


  std::vector<DicomConnection> DicomConnections::Snapshot() const
  {
    std::vector<DicomConnection> result;
    for (const Slot& slot : slots_)
    {
      DicomConnection view;
      if (ReadSlot(slot, view))
      {
        result.push_back(view);
      }
    }
    return result;
  }
}
