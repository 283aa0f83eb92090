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
// its OnStored asks for a reading, at most every 50 ms). Orthanc gives no sign of an association's
// arrival: a listener's readiness is gone as soon as Orthanc accepts, before a watcher could see it.
// While C-STORE instances arrive, the thread also checks every 20 ms that each open connection still
// holds its descriptor (CheckOpen, one system call per open association): an association that
// closed is seen within that time, before the same sender's next one (a process per instance) sends
// its first instance. The first instance of a new association is not attributed; the next ones are,
// and AssociationTracker links them to it.
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
    int64_t closedNs = 0;  // just after it was last known open (ClosedAt); 0 while open
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

    // The plugin's thread, between readings: whether each connection still open holds its descriptor
    // (`cookieOf(fd)`, one system call each); those that do not have closed. Returns how many did: a
    // new connection may hold a descriptor now, and a reading tells.
    //
    // A connection seen gone by a reading or a check closed after it was last seen open and after
    // the last instance it carried was stored (an association ends after its instances' answers):
    // closedNs is just after the later of the two, not the time it was seen gone. Checks come at
    // each C-STORE instance and soon after, not on a clock, so that the next association of a sender
    // is not taken as open while the one before it was still thought open.
    using CookieOf = uint64_t (*)(int fd);
    size_t CheckOpen(int64_t nowNs, CookieOf cookieOf);

    // The questions below take the time they are about (`atNs`, monotonic): an instance is recorded
    // by the plugin's thread after it was stored (IngestRecorder's queue), when its connection may
    // have closed since. kNow asks about the connections open as of the last reading.
    static constexpr int64_t kNow = INT64_MAX;

    // The cookie of the one connection from `peer` that may have been open at `atNs`, unless it
    // carries another calling AET than `remoteAet`; 0 otherwise: several (stale false: which one is
    // not known), or none or another AET's (stale true: the table is behind Orthanc, read it again).
    uint64_t Attribute(LabelId peer, LabelId remoteAet, int64_t atNs, bool& stale) const;
    uint64_t Attribute(LabelId peer, LabelId remoteAet = kUnidentified, int64_t atNs = kNow) const
    {
      bool stale;
      return Attribute(peer, remoteAet, atNs, stale);
    }
    // Ingest path: the calling AET seen on a connection, and when an instance it carried was stored
    // (0: not said).
    void SetRemoteAet(uint64_t cookie, LabelId remoteAet, int64_t storedNs = 0);
    // Ingest path: the calling AET of an instance whose connection was not read yet (Attribute said
    // stale), for the one connection from `peer` that the next reading finds new.
    void SetRemoteAetBeforeReading(LabelId peer, LabelId remoteAet);
    // Whether a connection was still open at `atNs` (false for an unknown cookie).
    bool IsOpen(uint64_t cookie, int64_t atNs = kNow) const;
    // Whether every connection that may have been open at `atNs` and may carry `remoteAet` (any, when
    // kUnidentified) has closed, as of the last reading.
    bool AllClosedSince(int64_t atNs, LabelId remoteAet) const;
    // The one connection from `peer` that may have been open at `atNs`, if exactly one may; else 0.
    uint64_t OnlyOneFromAt(LabelId peer, int64_t atNs) const;
    // Whether a connection from `peer` that may have been open at `atNs` was still open at `untilNs`.
    bool AnyOpenSince(int64_t atNs, LabelId peer, int64_t untilNs = kNow) const;
    // How many connections from `peer` may have been open at `atNs`.
    size_t OpenFrom(LabelId peer, int64_t atNs = kNow) const;
    // Whether a reading was made after `fromNs` and at or before `toNs` (the last kReadings kept).
    bool ReadBetween(int64_t fromNs, int64_t toNs) const;
    // The one connection that may have been open at `atNs` (opened after a reading before it, not
    // closed before it), if exactly one may.
    bool OnlyOpenAt(int64_t atNs, DicomConnection& connection) const;
    // When a connection opened (DicomConnection::openedNs), 0 for an unknown cookie.
    int64_t OpenedNs(uint64_t cookie) const;

    // POST /perf/reset forgot the label ids: the calling AETs seen on the connections are forgotten
    // (the next instance on each says it again), and each connection's address is written again at
    // the next reading.
    void ForgetLabels();
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
      std::atomic<int64_t> seenOpenNs{0};  // the last reading or check that found it open
      std::atomic<int64_t> storedNs{0};    // the last instance it carried (ingest path)
    };

    // A connection seen gone at nowNs: when it closed, as near as is known (see CheckOpen).
    static int64_t ClosedAt(const Slot& slot, int64_t nowNs);

    // A seqlock read of one slot: false when it is free or changed while read (its cookie differs).
    static bool ReadSlot(const Slot& slot, DicomConnection& view);

    std::atomic<bool> updating_{false};    // one writer at a time (the plugin's thread)
    std::atomic<bool> peersStale_{false};  // ForgetLabels: the next Update writes the known ones' address again
    struct PendingAet
    {
      std::atomic<LabelId> peer{kUnidentified};
      std::atomic<LabelId> remoteAet{kUnidentified};
    };
    static constexpr size_t kPendingAets = 8;
    std::array<PendingAet, kPendingAets> pendingAets_;
    std::atomic<uint32_t> nextPendingAet_{0};
    std::array<Slot, kCapacity> slots_;
    std::atomic<int64_t> lastReadingNs_{0};
    static constexpr size_t kReadings = 64;  // at most 20 a second (one per kReadingPeriodNs)
    std::array<std::atomic<int64_t>, kReadings> readings_{};
    uint32_t nextReading_ = 0;  // the writer's
  };
}
