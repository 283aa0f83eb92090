// The C-STORE gap: from OnStored of one instance to ReceivedInstance of the next one on the same
// association. In Orthanc 1.10.1 an association is re-queued to the DICOM worker pool after every
// command, so successive instances of one association run on different threads, and no hook names
// the association. What the plugin sees is the calling AET. Per AET, the OnStored times wait in a
// small queue; the next instance from that AET takes the oldest one that ended before it arrived.
// With one association per AET at a time (a modality, storescu) this is exactly the association
// gap. With simultaneous associations from one AET, gaps are paired oldest-first: count and mean
// stay right, single values may be swapped between associations. An end older than Orthanc's
// DicomScpTimeout cannot belong to a live association and is dropped.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace IngestPerf
{
  class AssociationTracker
  {
  public:
    static constexpr size_t kEndsPerPeer = 16;

    AssociationTracker(size_t peers, int64_t maxGapNs);
    ~AssociationTracker();

    // At OnStored of a C-STORE instance received at `receivedNs` (0 if unknown): returns the gap
    // before it, or -1, and remembers `storedNs` for the next instance of the same peer.
    int64_t InstanceStored(uint64_t peerKey, int64_t receivedNs, int64_t storedNs);

    uint64_t Skipped() const { return skipped_.load(std::memory_order_relaxed); }

  private:
    struct Peer;

    size_t capacity_;
    int64_t maxGapNs_;
    std::unique_ptr<Peer[]> peers_;
    std::atomic<uint64_t> skipped_;
  };
}
