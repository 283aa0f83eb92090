// C-STORE associations as the plugin can see them. In Orthanc 1.10.1 an association is handed back
// to the DICOM worker pool after every command, so its instances run on different threads, and no
// hook marks its start or release. What is seen is the calling AET of each instance. Per AET, an
// association is inferred as a chain of instances, each received after the previous one's OnStored,
// within Orthanc's DicomScpTimeout (an association idle for longer has been closed by Orthanc).
//
// The C-STORE gap is the link of a chain: OnStored of one instance to ReceivedInstance of the next.
// With one association per AET at a time (a modality, storescu) chains are exactly associations.
// With simultaneous associations from one AET, links are made oldest-first and an association that
// opens while another one of the same AET waits between instances is linked to it: gaps, instance
// counts and durations are then approximate (documented).
// A chain is finished (counted, with its instances and duration) once it has been idle longer than
// DicomScpTimeout, noticed at the AET's next instance or when statistics are read.
//
// Memory: MaxPeers slots reserved in lazily backed memory (two histograms each).
#pragma once

#include "Labels/InstanceLabels.h"
#include "Metrics/Histogram.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace IngestPerf
{
  struct PeerAssociations
  {
    LabelId remoteAet;
    uint64_t finished;
    uint64_t inProgress;
    // In progress by the inference, but their client's TCP connection is gone: no established
    // connection from the peer's address is left, and the chain was idle when the table was read.
    // Not in inProgress; counted in finished once DicomScpTimeout has passed.
    uint64_t closed;
    HistogramSnapshot instancesPerAssociation;
    HistogramSnapshot durationNs;  // ReceivedInstance of the first instance -> OnStored of the last
  };

  class AssociationTracker
  {
  public:
    static constexpr size_t kChainsPerPeer = 16;
    static constexpr size_t kMaxPeerProbe = 16;

    AssociationTracker(size_t peers, int64_t maxGapNs);
    ~AssociationTracker();
    AssociationTracker(const AssociationTracker&) = delete;
    AssociationTracker& operator=(const AssociationTracker&) = delete;

    // At OnStored of a C-STORE instance received at `receivedNs` (0 if unknown): returns the gap
    // before it, or -1, and extends or starts a chain for the peer.
    // remoteIp: the peer's address label (kOtherLabel when unknown), for Snapshot's `connected`.
    int64_t InstanceStored(uint64_t peerKey, LabelId remoteAet, int64_t receivedNs, int64_t storedNs,
                           LabelId remoteIp = kOtherLabel);

    // Chains idle for longer than DicomScpTimeout at `nowNs` count as finished in the copy (the
    // tracker itself finishes them at the peer's next instance): reading changes nothing.
    // connected(remoteIp), when given, says whether the TCP table read at connectedAsOfNs (before
    // this call) holds an established connection from that address; it is called without any lock.
    std::vector<PeerAssociations> Snapshot(int64_t nowNs, const std::function<bool(LabelId)>& connected = nullptr,
                                           int64_t connectedAsOfNs = 0) const;
    void ResetStatistics();  // chains in progress are kept: they describe open associations

    uint64_t Skipped() const { return skipped_.load(std::memory_order_relaxed); }

  private:
    struct Peer;

    Peer& PeerAt(size_t index) const;
    Peer* FindPeer(uint64_t peerKey);  // locked, or nullptr

    size_t capacity_;
    int64_t maxGapNs_;
    size_t bytes_;
    void* memory_;
    std::atomic<uint64_t> skipped_;
  };
}
