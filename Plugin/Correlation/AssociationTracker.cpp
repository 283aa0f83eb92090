#include "Correlation/AssociationTracker.h"

#include "Platform/BoundedSpinLock.h"

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
      uint64_t connection;  // the cookie of its TCP connection, 0 when inferred
      LabelId remoteIp;
      bool counted;  // false for a chain that started before the last reset
    };
  }


  // All-zero is a free slot (key 0), so the pool needs no construction.
  struct AssociationTracker::Peer
  {
    std::atomic<bool> locked;
    std::atomic<uint64_t> key;    // written under the lock; read without it to skip free slots
    std::atomic<int64_t> lastNs;  // the latest OnStored of its instances: the least recent is aged out
    LabelId remoteAet;
    uint32_t generation;  // of remoteAet
    size_t head;          // index of the oldest chain
    size_t count;
    Chain chains[kChainsPerPeer];
    std::atomic<uint64_t> finished;
    uint64_t finishedByConnection;
    Histogram instancesPerAssociation;
    Histogram durationNs;

    void Clear(uint64_t newKey, LabelId aet)
    {
      key.store(newKey, std::memory_order_release);
      lastNs.store(0, std::memory_order_relaxed);
      remoteAet = aet;
      head = 0;
      count = 0;
      finished.store(0, std::memory_order_relaxed);
      finishedByConnection = 0;
      instancesPerAssociation.Reset();
      durationNs.Reset();
    }

    Chain& At(size_t k) { return chains[(head + k) % kChainsPerPeer]; }
    const Chain& At(size_t k) const { return chains[(head + k) % kChainsPerPeer]; }

    void Finish(const Chain& chain)
    {
      if (!chain.counted)
      {
        return;
      }
      instancesPerAssociation.Record(static_cast<int64_t>(chain.instances));
      durationNs.Record(chain.lastEndNs - chain.startNs);
      finished.fetch_add(1, std::memory_order_relaxed);
      finishedByConnection += chain.connection != 0 ? 1 : 0;
    }

    // Removes the k-th oldest chain, keeping the order of the others.
    void Remove(size_t k)
    {
      for (size_t i = k; i + 1 < count; i++)
      {
        At(i) = At(i + 1);
      }
      count--;
    }

    void Push(const Chain& chain)
    {
      if (count == kChainsPerPeer)
      {
        Finish(At(0));  // more simultaneous associations than tracked: close the oldest
        head = (head + 1) % kChainsPerPeer;
        count--;
      }
      At(count) = chain;
      count++;
    }
  };


  // The associations of the AETs aged out since the reset. Written at an eviction (rare: only with
  // more calling AETs than MaxPeers, on the plugin's thread that records stored instances).
  struct AssociationTracker::AgedOutRow
  {
    uint64_t aets = 0;
    uint64_t finished = 0;
    uint64_t byConnection = 0;
    HistogramSnapshot instancesPerAssociation;
    HistogramSnapshot durationNs;
  };


  namespace
  {
    // Whether a chain is over at nowNs: its connection closed, or, inferred, idle for longer than
    // the timeout or with no connection left from its address.
    bool Over(const Chain& chain, int64_t nowNs, int64_t maxGapNs, const DicomConnections* connections)
    {
      // nowNs may be past (an instance recorded after it was stored): the table's answers are as of then.
      if (chain.connection != 0)
      {
        return connections == nullptr || !connections->IsOpen(chain.connection, nowNs);
      }
      if (maxGapNs > 0 && nowNs - chain.lastEndNs > maxGapNs)
      {
        return true;
      }
      // Every connection from its address that may have carried its last instance had closed by
      // nowNs, as a reading made after that instance and by nowNs tells (an earlier reading may not
      // have seen the connection of a new association yet; one that opened after its last instance
      // is another association).
      return connections != nullptr && connections->ReadBetween(chain.lastEndNs, nowNs) &&
             chain.remoteIp != kOtherLabel && chain.remoteIp != kNoneLabel &&
             !connections->AnyOpenSince(chain.lastEndNs, chain.remoteIp, nowNs);
    }
  }


  AssociationTracker::AssociationTracker(size_t peers, int64_t maxGapNs, const DicomConnections* connections) :
    capacity_(peers == 0 ? 1 : peers),
    maxGapNs_(maxGapNs),
    connections_(connections),
    bytes_(capacity_ * sizeof(Peer)),
    memory_(mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)),
    skipped_(0),
    agedOut_(new AgedOutRow)
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
    // Every slot near its hash holds another AET: the least recently active of them leaves.
    Peer* oldest = &PeerAt(start);
    for (size_t probe = 1; probe < probes; probe++)
    {
      Peer& candidate = PeerAt((start + probe) % capacity_);
      if (candidate.lastNs.load(std::memory_order_relaxed) < oldest->lastNs.load(std::memory_order_relaxed))
      {
        oldest = &candidate;
      }
    }
    return BoundedSpinLock(oldest->locked) ? oldest : nullptr;
  }


  void AssociationTracker::AgeOut(Peer& peer)
  {
    agedOutAets_.fetch_add(1, std::memory_order_relaxed);
    // Its chains in progress end here: if its sender goes on, the rest is another association.
    for (size_t k = 0; k < peer.count; k++)
    {
      peer.Finish(peer.At(k));
    }
    std::lock_guard<std::mutex> lock(agedOutMutex_);
    AgedOutRow& row = *agedOut_;
    row.aets++;
    row.finished += peer.finished.load(std::memory_order_relaxed);
    row.byConnection += peer.finishedByConnection;
    peer.instancesPerAssociation.AddTo(row.instancesPerAssociation);
    peer.durationNs.AddTo(row.durationNs);
  }


  int64_t AssociationTracker::InstanceStored(uint64_t peerKey, LabelId remoteAet, int64_t receivedNs, int64_t storedNs,
                                             LabelId remoteIp, uint64_t connection, uint32_t generation)
  {
    Peer* found = FindPeer(peerKey);
    if (found == nullptr)
    {
      skipped_.fetch_add(1, std::memory_order_relaxed);
      return -1;
    }
    Peer& peer = *found;
    const uint64_t held = peer.key.load(std::memory_order_relaxed);
    if (held != peerKey)
    {
      if (held != 0)
      {
        AgeOut(peer);  // the table is full near its hash: the least recently active AET leaves
      }
      peer.Clear(peerKey, remoteAet);
    }
    // As interned now (a reset, or the labels' ageing, forgets the ids of before), unless it is
    // "(other)" while the row has a name: an instance in flight as the values aged is "(other)", its
    // AET is the row's all the same (the row is this AET's: peerKey), named while its ids are.
    if (remoteAet != kOtherLabel || peer.remoteAet == kOtherLabel || peer.remoteAet == kUnidentified)
    {
      peer.remoteAet = remoteAet;
      peer.generation = generation;
    }
    if (storedNs > peer.lastNs.load(std::memory_order_relaxed))
    {
      peer.lastNs.store(storedNs, std::memory_order_relaxed);
    }
    const int64_t resetNs = resetNs_.load(std::memory_order_relaxed);
    const int64_t start = receivedNs != 0 ? receivedNs : storedNs;

    // Chains that are over end here, oldest first, except the one of this instance's connection.
    for (size_t k = 0; k < peer.count;)
    {
      const Chain& chain = peer.At(k);
      if ((connection == 0 || chain.connection != connection) && Over(chain, start, maxGapNs_, connections_))
      {
        peer.Finish(chain);
        peer.Remove(k);
      }
      else
      {
        k++;
      }
    }

    // The chain this instance continues: its connection's, else, if the connection is not known
    // (its address has several open), the oldest inferred chain waiting for a successor, else the
    // oldest chain of a known connection of this AET waiting for one: an association whose first
    // instances came while its connection was its address's only one goes on when others open.
    size_t link = peer.count;
    // Only while its address has several connections open: a known chain whose connection is over
    // (none open, or the table behind Orthanc) is never continued by an instance of another.
    const bool several = connection == 0 && connections_ != nullptr && connections_->OpenFrom(remoteIp, start) > 1;
    for (int pass = 0; pass < (several ? 2 : 1) && link == peer.count; pass++)
    {
      for (size_t k = 0; k < peer.count; k++)
      {
        const Chain& chain = peer.At(k);
        const bool waiting = receivedNs != 0 && chain.lastEndNs <= receivedNs;
        if (connection != 0
              ? (pass == 0 && chain.connection == connection)
              : (waiting && (pass == 0 ? chain.connection == 0
                                       : chain.connection != 0 && connections_->IsOpen(chain.connection, start))))
        {
          link = k;
          break;
        }
      }
    }
    if (link == peer.count && connection != 0 && connections_ != nullptr)
    {
      // The first instances of an association came before the plugin's thread had read its
      // connection: the inferred chain they started from its address is its own if this connection
      // is the only one from there that may have been open then.
      // Or, with several connections open from there (senders started at once), the one inferred
      // chain of this calling AET from that address waiting for a successor, when this connection may
      // have been open at its first instance (no reading between them saw it closed or not yet open): the AET's own
      // association, whose first instances came before any reading could see it (two at once from one
      // AET and address leave more than one, and none is taken).
      const int64_t openedNs = connections_->OpenedNs(connection);
      size_t inferred = peer.count;
      size_t waitingInferred = 0;
      for (size_t k = 0; k < peer.count && link == peer.count; k++)
      {
        const Chain& chain = peer.At(k);
        const bool waiting = receivedNs != 0 && chain.lastEndNs <= receivedNs;
        if (chain.connection == 0 && waiting && chain.remoteIp == remoteIp)
        {
          if (connections_->OnlyOneFromAt(remoteIp, chain.startNs) == connection)
          {
            link = k;
          }
          if (openedNs <= chain.startNs)  // no reading between them: it may have carried the first
          {
            inferred = k;
            waitingInferred++;
          }
        }
      }
      if (link == peer.count && waitingInferred == 1)
      {
        link = inferred;
      }
    }
    int64_t gap = -1;
    Chain next{start, storedNs, 1, connection, remoteIp, start >= resetNs};
    if (link < peer.count)
    {
      const Chain previous = peer.At(link);
      if (receivedNs != 0 && previous.lastEndNs <= receivedNs && previous.lastEndNs >= resetNs)
      {
        gap = receivedNs - previous.lastEndNs;
      }
      next = Chain{
        previous.startNs, storedNs,        previous.instances + 1, connection != 0 ? connection : previous.connection,
        remoteIp,         previous.counted};
      peer.Remove(link);
    }
    peer.Push(next);
    peer.locked.store(false, std::memory_order_release);
    return gap;
  }


  std::vector<PeerAssociations> AssociationTracker::Snapshot(int64_t nowNs) const
  {
    std::vector<PeerAssociations> result;
    // The AETs beyond MaxLabelValues share the label "(other)": one row for all of them, not one
    // indistinguishable row each.
    PeerAssociations other;
    other.aets = 0;
    for (size_t index = 0; index < capacity_; index++)
    {
      Peer& peer = PeerAt(index);
      if (peer.key.load(std::memory_order_acquire) == 0)
      {
        continue;
      }
      if (!BoundedSpinLock(peer.locked))
      {
        continue;
      }
      // A peer of its own is copied into a row of its own; one beyond MaxLabelValues is added to
      // the "(other)" row straight away (with 300 calling AETs and 32 values, 268 of them: no copy
      // of their histograms to merge afterwards).
      // Read under the peer's lock: each instance writes them (its AET's id, and the id's generation).
      const LabelId remoteAet = peer.remoteAet;
      const uint32_t generation = peer.generation;
      const bool isOther = remoteAet == kOtherLabel;
      PeerAssociations own;
      PeerAssociations& row = isOther ? other : own;
      const uint64_t finishedBefore = row.finished;
      const uint64_t inProgressBefore = row.inProgress;
      const uint64_t finished = peer.finished.load(std::memory_order_relaxed);
      row.finished += finished;
      row.byConnection += peer.finishedByConnection;
      row.inferred += finished - peer.finishedByConnection;
      peer.instancesPerAssociation.AddTo(row.instancesPerAssociation);
      peer.durationNs.AddTo(row.durationNs);
      // Chains that are over count as finished in the row, as the peer's next instance would close
      // them; the tracker is not changed.
      for (size_t k = 0; k < peer.count; k++)
      {
        const Chain& chain = peer.At(k);
        if (!chain.counted)
        {
          continue;
        }
        (chain.connection != 0 ? row.byConnection : row.inferred)++;
        if (Over(chain, nowNs, maxGapNs_, connections_))
        {
          row.finished++;
          row.instancesPerAssociation.Add(static_cast<int64_t>(chain.instances));
          row.durationNs.Add(chain.lastEndNs - chain.startNs);
        }
        else
        {
          row.inProgress++;
        }
      }
      peer.locked.store(false, std::memory_order_release);
      if (row.finished == finishedBefore && row.inProgress == inProgressBefore)
      {
        continue;
      }
      if (isOther)
      {
        other.aets++;
        continue;
      }
      own.remoteAet = remoteAet;
      own.generation = generation;
      result.push_back(std::move(own));
    }
    if (other.finished != 0 || other.inProgress != 0)
    {
      result.push_back(std::move(other));
    }
    std::lock_guard<std::mutex> lock(agedOutMutex_);
    const AgedOutRow& aged = *agedOut_;
    if (aged.aets != 0)
    {
      PeerAssociations row;
      row.agedOut = true;
      row.aets = aged.aets;
      row.finished = aged.finished;
      row.byConnection = aged.byConnection;
      row.inferred = aged.finished - aged.byConnection;
      row.instancesPerAssociation = aged.instancesPerAssociation;
      row.durationNs = aged.durationNs;
      result.push_back(std::move(row));
    }
    return result;
  }


  void AssociationTracker::ResetStatistics(int64_t nowNs)
  {
    resetNs_.store(nowNs, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(agedOutMutex_);
      *agedOut_ = AgedOutRow();
    }
    for (size_t index = 0; index < capacity_; index++)
    {
      Peer& peer = PeerAt(index);
      if (peer.key.load(std::memory_order_acquire) == 0 || !BoundedSpinLock(peer.locked))
      {
        continue;
      }
      peer.finished.store(0, std::memory_order_relaxed);
      peer.finishedByConnection = 0;
      peer.instancesPerAssociation.Reset();
      peer.durationNs.Reset();
      for (size_t k = 0; k < peer.count; k++)
      {
        peer.At(k).counted = false;  // started before the reset
      }
      peer.locked.store(false, std::memory_order_release);
    }
  }
}
