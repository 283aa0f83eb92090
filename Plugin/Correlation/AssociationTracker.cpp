#include "Correlation/AssociationTracker.h"

#include "Correlation/BoundedSpinLock.h"

#include <sys/mman.h>

#include <new>

namespace IngestPerf
{
  namespace
  {
    struct Chain
    {
      int64_t startNs;
      int64_t lastEndNs;
      uint64_t instances;
    };
  }


  // All-zero is a free slot (key 0), so the pool needs no construction.
  struct AssociationTracker::Peer
  {
    std::atomic<bool> locked;
    std::atomic<uint64_t> key;  // written under the lock; read without it to skip free slots
    LabelId remoteAet;
    std::atomic<LabelId> remoteIp;  // the address of its last instance; read without the lock
    size_t head;                    // index of the oldest chain
    size_t count;
    Chain chains[kChainsPerPeer];
    std::atomic<uint64_t> finished;
    Histogram instancesPerAssociation;
    Histogram durationNs;

    void Clear(uint64_t newKey, LabelId aet)
    {
      key.store(newKey, std::memory_order_release);
      remoteAet = aet;
      remoteIp.store(kOtherLabel, std::memory_order_relaxed);
      head = 0;
      count = 0;
      finished.store(0, std::memory_order_relaxed);
      instancesPerAssociation.Reset();
      durationNs.Reset();
    }

    void FinishOldest()
    {
      const Chain& chain = chains[head];
      instancesPerAssociation.Record(static_cast<int64_t>(chain.instances));
      durationNs.Record(chain.lastEndNs - chain.startNs);
      finished.fetch_add(1, std::memory_order_relaxed);
      DropOldest();
    }

    void DropOldest()
    {
      head = (head + 1) % kChainsPerPeer;
      count--;
    }

    void Push(const Chain& chain)
    {
      if (count == kChainsPerPeer)
      {
        FinishOldest();  // more simultaneous associations than tracked: close the oldest
      }
      chains[(head + count) % kChainsPerPeer] = chain;
      count++;
    }

    // The k-th oldest chain has been idle for longer than the timeout at `nowNs`.
    bool ChainIdle(size_t k, int64_t nowNs, int64_t maxGapNs) const
    {
      return maxGapNs > 0 && nowNs - chains[(head + k) % kChainsPerPeer].lastEndNs > maxGapNs;
    }

    void ExpireBefore(int64_t nowNs, int64_t maxGapNs)
    {
      while (count > 0 && ChainIdle(0, nowNs, maxGapNs))
      {
        FinishOldest();
      }
    }
  };


  AssociationTracker::AssociationTracker(size_t peers, int64_t maxGapNs) :
    capacity_(peers == 0 ? 1 : peers),
    maxGapNs_(maxGapNs),
    bytes_(capacity_ * sizeof(Peer)),
    memory_(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)),
    skipped_(0)
  {
    if (memory_ == MAP_FAILED)
    {
      throw std::bad_alloc();
    }
  }


  AssociationTracker::~AssociationTracker()
  {
    munmap(memory_, bytes_);
  }


  AssociationTracker::Peer& AssociationTracker::PeerAt(size_t index) const
  {
    return static_cast<Peer*>(memory_)[index];
  }


  AssociationTracker::Peer* AssociationTracker::FindPeer(uint64_t peerKey)
  {
    // Open addressing: the AET's own slot, or the first free one after its hash. The slot is returned locked: held for
    // a few dozen nanoseconds by OnStored, which Orthanc already serialises, and by a statistics reader; never waited
    // for long (nullptr then). Probing stops after kMaxPeerProbe slots (each is a few kilobytes): a full table costs a
    // bounded number of cache misses, and an AET with no slot near its hash evicts the hash's slot.
    const size_t start = peerKey % capacity_;
    const size_t probes = capacity_ < kMaxPeerProbe ? capacity_ : kMaxPeerProbe;
    for (size_t probe = 0; probe < probes; probe++)
    {
      Peer& candidate = PeerAt((start + probe) % capacity_);
      const uint64_t key = candidate.key.load(std::memory_order_acquire);
      if (key != peerKey && key != 0)
      {
        continue;
      }
      if (!BoundedSpinLock(candidate.locked))
      {
        return nullptr;
      }
      const uint64_t locked = candidate.key.load(std::memory_order_relaxed);
      if (locked == peerKey || locked == 0)
      {
        return &candidate;
      }
      candidate.locked.store(false, std::memory_order_release);  // claimed meanwhile by another AET
    }
    Peer& evicted = PeerAt(start);
    return BoundedSpinLock(evicted.locked) ? &evicted : nullptr;
  }


  int64_t AssociationTracker::InstanceStored(uint64_t peerKey, LabelId remoteAet, int64_t receivedNs, int64_t storedNs,
                                             LabelId remoteIp)
  {
    Peer* found = FindPeer(peerKey);
    if (found == nullptr)
    {
      skipped_.fetch_add(1, std::memory_order_relaxed);
      return -1;
    }
    Peer& peer = *found;
    if (peer.key.load(std::memory_order_relaxed) != peerKey)
    {
      peer.Clear(peerKey, remoteAet);  // a free slot, or the table is full: this AET takes it over
    }

    int64_t gap = -1;
    Chain chain{receivedNs != 0 ? receivedNs : storedNs, storedNs, 1};
    if (receivedNs != 0)
    {
      peer.ExpireBefore(receivedNs, maxGapNs_);
      if (peer.count > 0 && peer.chains[peer.head].lastEndNs <= receivedNs)
      {
        const Chain& previous = peer.chains[peer.head];
        gap = receivedNs - previous.lastEndNs;
        chain = Chain{previous.startNs, storedNs, previous.instances + 1};
        peer.DropOldest();
      }
    }
    peer.Push(chain);
    peer.remoteIp.store(remoteIp, std::memory_order_relaxed);
    peer.locked.store(false, std::memory_order_release);
    return gap;
  }


  std::vector<PeerAssociations> AssociationTracker::Snapshot(int64_t nowNs,
                                                             const std::function<bool(LabelId)>& connected,
                                                             int64_t connectedAsOfNs) const
  {
    std::vector<PeerAssociations> result;
    for (size_t index = 0; index < capacity_; index++)
    {
      Peer& peer = PeerAt(index);
      if (peer.key.load(std::memory_order_acquire) == 0)
      {
        continue;
      }
      // Asked before taking the lock, which the ingest path may be waiting for.
      const LabelId address = peer.remoteIp.load(std::memory_order_relaxed);
      const bool disconnected = connected && address != kOtherLabel && address != kNoneLabel && !connected(address);
      if (!BoundedSpinLock(peer.locked))
      {
        continue;
      }
      PeerAssociations copy{peer.remoteAet,
                            peer.finished.load(std::memory_order_relaxed),
                            peer.count,
                            0,
                            peer.instancesPerAssociation.Snapshot(),
                            peer.durationNs.Snapshot()};
      // Chains idle longer than the timeout are finished associations: counted so in the copy,
      // oldest first as the next instance of the peer would close them; the tracker is not changed.
      size_t k = 0;
      for (; k < peer.count && peer.ChainIdle(k, nowNs, maxGapNs_); k++)
      {
        const Chain& chain = peer.chains[(peer.head + k) % kChainsPerPeer];
        copy.finished++;
        copy.inProgress--;
        copy.instancesPerAssociation.Add(static_cast<int64_t>(chain.instances));
        copy.durationNs.Add(chain.lastEndNs - chain.startNs);
      }
      if (disconnected && peer.remoteIp.load(std::memory_order_relaxed) == address)
      {
        // The chains left, idle since before the TCP table was read: their clients are gone.
        for (; k < peer.count; k++)
        {
          if (peer.chains[(peer.head + k) % kChainsPerPeer].lastEndNs < connectedAsOfNs)
          {
            copy.closed++;
            copy.inProgress--;
          }
        }
      }
      peer.locked.store(false, std::memory_order_release);
      result.push_back(std::move(copy));
    }
    return result;
  }


  void AssociationTracker::ResetStatistics()
  {
    for (size_t index = 0; index < capacity_; index++)
    {
      Peer& peer = PeerAt(index);
      if (peer.key.load(std::memory_order_acquire) == 0 || !BoundedSpinLock(peer.locked))
      {
        continue;
      }
      peer.finished.store(0, std::memory_order_relaxed);
      peer.instancesPerAssociation.Reset();
      peer.durationNs.Reset();
      peer.locked.store(false, std::memory_order_release);
    }
  }
}
