#include "AssociationTracker.h"

#include "BoundedSpinLock.h"

namespace IngestPerf
{
  struct AssociationTracker::Peer
  {
    std::atomic<bool> locked{false};
    uint64_t key = 0;
    size_t head = 0;  // index of the oldest end
    size_t count = 0;
    int64_t ends[kEndsPerPeer] = {};

    void Clear(uint64_t newKey)
    {
      key = newKey;
      head = 0;
      count = 0;
    }

    void Pop()
    {
      head = (head + 1) % kEndsPerPeer;
      count--;
    }

    void Push(int64_t end)
    {
      if (count == kEndsPerPeer)
      {
        Pop();  // more simultaneous associations than tracked: forget the oldest
      }
      ends[(head + count) % kEndsPerPeer] = end;
      count++;
    }
  };


  AssociationTracker::AssociationTracker(size_t peers, int64_t maxGapNs) :
    capacity_(peers == 0 ? 1 : peers),
    maxGapNs_(maxGapNs),
    peers_(new Peer[capacity_]),
    skipped_(0)
  {
  }


  AssociationTracker::~AssociationTracker() = default;


  int64_t AssociationTracker::InstanceStored(uint64_t peerKey, int64_t receivedNs, int64_t storedNs)
  {
    Peer& peer = peers_[peerKey % capacity_];
    // Held for a few dozen nanoseconds by OnStored, which Orthanc already serialises; a second
    // holder would be a concurrent test or a future Orthanc. Never wait long: skip and count.
    if (!BoundedSpinLock(peer.locked))
    {
      skipped_.fetch_add(1, std::memory_order_relaxed);
      return -1;
    }
    if (peer.key != peerKey)
    {
      peer.Clear(peerKey);
    }

    int64_t gap = -1;
    if (receivedNs != 0)
    {
      while (peer.count > 0 && maxGapNs_ > 0 && receivedNs - peer.ends[peer.head] > maxGapNs_)
      {
        peer.Pop();  // that association has timed out since
      }
      if (peer.count > 0 && peer.ends[peer.head] <= receivedNs)
      {
        gap = receivedNs - peer.ends[peer.head];
        peer.Pop();
      }
    }
    peer.Push(storedNs);
    peer.locked.store(false, std::memory_order_release);
    return gap;
  }
}
