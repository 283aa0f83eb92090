// The TCP connections of Orthanc's DICOM server, one per association, as the plugin's thread reads
// them from Orthanc's own descriptors (ProcessSockets): when each opened and closed, from which
// address, and the calling AET seen on it. A C-STORE instance names its peer's address, not its
// connection; when that address has exactly one connection open, and the descriptor still holds
// that socket, the instance came over it: back-to-back associations of one sender are told apart,
// and the time between them is not a gap inside an association. With several connections open from
// one address at once, the instance is not attributed (AssociationTracker then infers, as before).
//
// Read on the ingest path (Attribute: a scan of at most kCapacity slots of the plugin's own memory, no
// system call, no lock, no allocation). Updated by the plugin's thread only, once a second while
// Orthanc ingests, and soon after an instance's connection was not in the table (a new association:
// its OnStored asks for a reading, at most every 100 ms). Orthanc gives no sign of an association's
// arrival: a listener's readiness is gone as soon as Orthanc accepts, before a watcher could see it.
// So the table is as old as its last reading: the first instance of a new association is not
// attributed, and two associations of one sender less than a reading apart may be taken for one.
#pragma once

#include "Correlation/ProcessSockets.h"
#include "Labels/InstanceLabels.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace IngestPerf
{
  struct DicomConnection
  {
    uint64_t cookie = 0;
    LabelId peer = kOtherLabel;         // the peer's address, interned in the RemoteIp dictionary
    LabelId remoteAet = kUnidentified;  // the calling AET of an instance attributed to it
    // Opened after this (the reading before the one that first saw it; 0: before any reading).
    int64_t openedNs = 0;
    int64_t closedNs = 0;  // when it was seen gone; 0 while open
  };

  class DicomConnections
  {
  public:
    static constexpr size_t kCapacity = 64;  // open and recently closed connections
    // A closed connection is kept this long for the records and associations that ended on it.
    static constexpr int64_t kKeepClosedNs = 120 * int64_t(1000000000);

    DicomConnections() = default;

    // After a reading of Orthanc's descriptors at nowNs: `open` are the connected sockets of the
    // DICOM port (no listener), with their peers interned. Connections not in the list have closed
    // (closedNs: nowNs); new ones opened since the previous reading.
    struct Reading
    {
      uint64_t cookie;
      int fd;
      LabelId peer;
    };
    void Update(const Reading* open, size_t count, int64_t nowNs);

    // Ingest path: the cookie of the one connection open from `peer` as of the last reading; 0
    // otherwise: several (stale false: which one is not known), or none (stale true: the table is
    // behind Orthanc, read it again).
    uint64_t Attribute(LabelId peer, bool& stale) const;
    uint64_t Attribute(LabelId peer) const
    {
      bool stale;
      return Attribute(peer, stale);
    }
    // Ingest path: the calling AET seen on a connection.
    void SetRemoteAet(uint64_t cookie, LabelId remoteAet);
    // Whether a connection is still open as of the last reading (false for an unknown cookie).
    bool IsOpen(uint64_t cookie) const;
    // Whether every connection that may have been open at `atNs` and may carry `remoteAet` (any, when
    // kUnidentified) has closed, as of the last reading.
    bool AllClosedSince(int64_t atNs, LabelId remoteAet) const;
    // How many connections are open from `peer` as of the last reading.
    size_t OpenFrom(LabelId peer) const;
    // The one connection that may have been open at `atNs` (opened after a reading before it, not
    // closed before it), if exactly one may.
    bool OnlyOpenAt(int64_t atNs, DicomConnection& connection) const;
    // When a connection opened (DicomConnection::openedNs), 0 for an unknown cookie.
    int64_t OpenedNs(uint64_t cookie) const;

    size_t OpenCount() const;
    // When the last reading was made (monotonic ns), 0 before the first.
    int64_t LastReadingNs() const { return lastReadingNs_.load(std::memory_order_acquire); }
    std::vector<DicomConnection> Snapshot() const;

  private:
    struct Slot
    {
      std::atomic<uint64_t> cookie{0};  // 0: free
      std::atomic<int> fd{-1};
      std::atomic<LabelId> peer{kOtherLabel};
      std::atomic<LabelId> remoteAet{kUnidentified};
      std::atomic<int64_t> openedNs{0};
      std::atomic<int64_t> closedNs{0};
    };

    std::atomic<bool> updating_{false};  // one writer at a time (the plugin's thread, an OnStored)
    std::array<Slot, kCapacity> slots_;
    std::atomic<int64_t> lastReadingNs_{0};
  };
}
