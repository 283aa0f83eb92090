// C-STORE associations as the plugin can see them. In Orthanc an association is handed back to the
// DICOM worker pool after every command, so its instances run on different threads, and no hook
// marks its start or release. Each association is a TCP connection of Orthanc's (DicomConnections):
// an instance whose connection is known (the only one open from its peer's address) belongs to the
// chain of that connection, and a new connection is a new association, however soon after the last
// one and whichever worker thread serves it. An instance whose connection is not known (several
// connections open from one address, or the plugin's reading of them behind) is linked as before,
// per calling AET, to a chain of instances each received after the previous one's OnStored within
// Orthanc's DicomScpTimeout, never to a chain of a known connection.
//
// The C-STORE gap is the link of a chain: OnStored of one instance to ReceivedInstance of the next.
// A chain is finished (counted, with its instances and duration) when its connection closes, or,
// with no known connection, once it has been idle longer than DicomScpTimeout or no connection
// from its address is left; noticed at the AET's next instance or when statistics are read.
// After ResetStatistics, the chains that started before it are never counted, and a gap that
// started before it is not returned.
//
// Beyond MaxPeers calling AETs, the one least recently active among those near a new AET's hash is
// aged out: its associations, finished and in progress, are added to one row of every AET aged out
// since the reset (PeerAssociations::agedOut), so every association is counted once, named or not.
//
// Memory: MaxPeers slots reserved in lazily backed memory (two histograms each).
#pragma once

#include "Correlation/DicomConnections.h"
#include "Labels/InstanceLabels.h"
#include "Metrics/Histogram.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace IngestPerf
{
  struct PeerAssociations
  {
    LabelId remoteAet = kOtherLabel;
    uint32_t generation = 0;  // of remoteAet (LabelCatalog::Name)
    // The row of the calling AETs aged out of the table since the reset (remoteAet is meaningless):
    // `aets` of them, their associations counted as finished when they left.
    bool agedOut = false;
    // Distinct calling AETs in the row: 1, or, in the one "(other)" row, every AET beyond
    // MaxLabelValues (each still tracked on its own, merged when read).
    uint64_t aets = 1;
    uint64_t finished = 0;
    uint64_t inProgress = 0;
    // Of those: the associations told apart by their TCP connection, and those inferred.
    uint64_t byConnection = 0;
    uint64_t inferred = 0;
    HistogramSnapshot instancesPerAssociation;
    HistogramSnapshot durationNs;  // ReceivedInstance of the first instance -> OnStored of the last
  };

  class AssociationTracker
  {
  public:
    static constexpr size_t kChainsPerPeer = 16;
    static constexpr size_t kMaxPeerProbe = 16;

    // connections: Orthanc's DICOM connections (null: every association is inferred).
    AssociationTracker(size_t peers, int64_t maxGapNs, const DicomConnections* connections = nullptr);
    ~AssociationTracker();
    AssociationTracker(const AssociationTracker&) = delete;
    AssociationTracker& operator=(const AssociationTracker&) = delete;

    // At OnStored of a C-STORE instance received at `receivedNs` (0 if unknown): returns the gap
    // before it, or -1, and extends or starts a chain for the peer. connection: the cookie of the
    // instance's TCP connection (DicomConnections::Attribute), 0 if not known. remoteIp: the peer's
    // address label.
    // generation: the catalog's generation of remoteAet (InstanceLabels::generation).
    int64_t InstanceStored(uint64_t peerKey, LabelId remoteAet, int64_t receivedNs, int64_t storedNs,
                           LabelId remoteIp = kOtherLabel, uint64_t connection = 0, uint32_t generation = 0);

    // Chains whose connection closed, or idle for longer than DicomScpTimeout at `nowNs`, count as
    // finished in the copy (the tracker itself finishes them at the peer's next instance): reading
    // changes nothing. One row per calling AET named, and one "(other)" row for all the others.
    std::vector<PeerAssociations> Snapshot(int64_t nowNs) const;
    // Counts zeroed; the chains open now go on (their gaps are still measured) but are never counted.
    void ResetStatistics(int64_t nowNs);

    uint64_t Skipped() const { return skipped_.load(std::memory_order_relaxed); }
    // Calling AETs aged out since the start (whatever a reset says).
    uint64_t AgedOut() const { return agedOutAets_.load(std::memory_order_relaxed); }

  private:
    struct Peer;
    struct AgedOutRow;

    // Adds the peer's associations to the aged-out row (the peer is locked).
    void AgeOut(Peer& peer);

    Peer& PeerAt(size_t index) const;
    Peer* FindPeer(uint64_t peerKey);  // locked, or nullptr

    size_t capacity_;
    int64_t maxGapNs_;
    const DicomConnections* connections_;
    std::atomic<int64_t> resetNs_{0};
    size_t bytes_;
    void* memory_;
    std::atomic<uint64_t> skipped_;
    std::atomic<uint64_t> agedOutAets_{0};
    mutable std::mutex agedOutMutex_;  // at an eviction (rare, more AETs than MaxPeers) and by readers
    std::unique_ptr<AgedOutRow> agedOut_;
  };
}
