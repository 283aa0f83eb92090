#include "Recording/IngestState.h"

#include "Platform/HttpConnectionIdentity.h"
#include "Platform/MonotonicClock.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace IngestPerf
{
  namespace
  {
    IngestState* active = nullptr;
  }


  IngestState* ActiveIngestState()
  {
    return active;
  }


  void SetActiveIngestState(IngestState* state)
  {
    active = state;
  }


  IngestState::IngestState(const Configuration& configuration) :
    timelines(configuration.maxThreads),
    labels(configuration.maxLabelValues),
    correlator(configuration.changeTableSize),
    associations(configuration.maxPeers, static_cast<int64_t>(configuration.dicomScpTimeoutSeconds) * 1000000000,
                 &connections),
    stats(MonotonicNowNs(), WallNowNs(), configuration.maxStreams, MonotonicNowNs),
    recent(configuration.recentInstances),
    recorder(stats, labels, correlator, associations, changes, recent, configuration.overwriteInstances,
             &storageCondition, configuration.timedStorage, &connections),
    concluder(timelines, recorder, connections),
    dicomPort_(static_cast<uint16_t>(configuration.dicomPort))
  {
    recorder.SetConnectionOf([this](LabelId peer, LabelId remoteAet, int64_t atNs, int64_t checkSinceNs, bool& later) {
      return ConnectionOf(peer, remoteAet, atNs, checkSinceNs, later);
    });
    ThreadCpuClockShareNs();  // measured once, before the first timed call
    // The storage folder, unless a storage plugin owns the storage area (its free space says nothing).
    storageLimits.folder = configuration.storagePluginSection.empty() ? configuration.storageDirectory : "";
    storageLimits.maximumStorageBytes = configuration.maximumStorageBytes;
    storageLimits.maximumPatientCount = configuration.maximumPatientCount;
  }


  void IngestState::Tick(int64_t nowNs)
  {
    // The storage first, so that the stores concluded next say why they failed: its free space
    // (one statvfs).
    storageCondition.Assess(storageLimits);
    recorder.Drain();
    recorder.ClassifyPending();
    concluder.ConcludeEnded(nowNs, httpSockets_);
    recorder.ClassifyPending();
    AgeLabelsIfFull(nowNs);
  }


  void IngestState::DrainForReader()
  {
    // Every instance stored before the reader asked: one held for its check is waited for, at most
    // kReaderWaitNs, then named as the table is; one stored since is left to the plugin's thread.
    const int64_t askedNs = MonotonicNowNs();
    const auto heldBefore = [this, askedNs] {
      const int64_t held = recorder.HeldStoredNs();
      return held != 0 && held <= askedNs;
    };
    recorder.Drain();
    while (heldBefore() && MonotonicNowNs() - askedNs < kReaderWaitNs)
    {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      recorder.Drain();
    }
    while (heldBefore())
    {
      recorder.Drain(true);  // the plugin's thread is far behind, or stopped
    }
  }


  void IngestState::AgeLabelsIfFull(int64_t nowNs)
  {
    // Full tables name no new sender: when a dictionary or the streams are three quarters full, the
    // values age out, at most once a minute (the senders of the last minute or more stay named).
    const StreamTable& streams = stats.Streams();
    const bool full = labels.MostFilled() >= kAgeAtFill ||
                      static_cast<double>(streams.Used()) >= kAgeAtFill * static_cast<double>(streams.Capacity());
    if (!full || std::max(startNs_, labels.LastRotationNs()) > nowNs - kMinLabelAgeNs)
    {
      return;
    }
    recorder.AgeLabels(nowNs - kMinLabelAgeNs);  // the values used in the last minute stay
    connections.ForgetLabels();                  // its addresses are interned again at the next reading
  }


  void IngestState::SocketsRead(const std::vector<SocketInfo>& sockets, int64_t nowNs)
  {
    std::vector<DicomConnections::Reading>& open = dicomReadings_;  // the plugin's thread's own
    open.clear();
    httpSockets_.clear();
    for (const SocketInfo& socket : sockets)
    {
      if (socket.localPort == dicomPort_)
      {
        open.push_back(DicomConnections::Reading{socket.cookie, socket.fd,
                                                 labels.InternValue(LabelDimension::RemoteIp, socket.peer)});
      }
      else
      {
        httpSockets_.push_back(socket);
      }
    }
    connections.Update(open.data(), open.size(), nowNs);
    HttpConnectionIdentity::VerifyCandidate([this](uint64_t connection) {
      return std::any_of(httpSockets_.begin(), httpSockets_.end(), [connection](const SocketInfo& socket) {
        return HttpConnectionIdentity::KeyOf(socket.peer, socket.peerPort) == connection;
      });
    });
  }


  bool IngestState::CheckConnections(int64_t nowNs)
  {
    return connections.CheckOpen(nowNs, SocketCookie) > 0;
  }


  uint64_t IngestState::ConnectionOf(LabelId peer, LabelId remoteAet, int64_t atNs, int64_t checkSinceNs, bool& later)
  {
    const int64_t nowNs = MonotonicNowNs();
    // The table may still hold the association before this instance's as open: named by the plugin's
    // thread once it has checked (the instance's record waits in the queue).
    later = checkSinceNs != 0 && checkedSince && !checkedSince(checkSinceNs);
    bool stale = false;
    const uint64_t cookie = later ? 0 : connections.Attribute(peer, remoteAet, atNs, stale);
    if (stale && readingWanted)
    {
      readingWanted(nowNs);  // a new association, which the plugin's thread reads
    }
    return cookie;
  }


  IngestReport IngestState::Collect(const StatsQuery& query, const PluginStatus& status)
  {
    DrainForReader();
    const int64_t now = MonotonicNowNs();
    IngestReport report;
    report.status = &status;
    report.collected = true;
    report.catalog = &labels;
    report.windowsKept = stats.HasWindows();
    {
      // One reading of the statistics (one lock, one check of what changed since the last).
      const IngestStats::Reading reading(stats);
      report.snapshot = reading.Snapshot(now, query.partQuantiles && !query.hasWindow && !query.UsesStreams());
      // After the statistics: a record closed in between is then in neither (never in both).
      report.openRecords = timelines.CountOpen(stats.CountsFromNs());
      if (query.eachStream)
      {
        report.eachStream = reading.SnapshotEachStream(query.eachStreamPhases);
      }
      if (report.windowsKept && query.hasWindow)
      {
        report.window = reading.SnapshotWindow(query.window, now);
      }
      else if (report.windowsKept && !query.UsesStreams() && query.details)
      {
        report.recent = {reading.SnapshotWindow(Window::OneMinute, now),
                         reading.SnapshotWindow(Window::FiveMinutes, now)};
      }
      if (query.details)
      {
        report.failingStreams = reading.SnapshotFailingStreams();
        report.associations.gaps = reading.SnapshotAssociationGaps();
      }
    }
    report.correlationSkipped = correlator.Skipped();
    report.correlationEvicted = correlator.Evicted();
    report.associationSkipped = associations.Skipped();
    const StreamTable& table = stats.Streams();
    report.streams = StreamInfo{table.Capacity(), table.Used(), table.Overflowed(), StreamTable::BytesPerStream()};
    report.streams.rotations = labels.Rotations();
    report.streams.folded = table.Folded();
    report.streams.lastRotationAgoNs = labels.Rotations() != 0 ? now - labels.LastRotationNs() : -1;
    if (query.UsesStreams() && query.hasWindow && report.windowsKept)
    {
      // The labelled streams are kept since the reset: a window's senders come from the ring.
      const int64_t fromNs = now - report.window.coveredNs;
      report.grouped = GroupRecentInstances(recent.Snapshot(fromNs), query, labels, fromNs);
    }
    else if (query.UsesStreams())
    {
      report.grouped = stats.SnapshotGrouped(MakeStreamPredicate(query, labels), query.GroupBy());
    }
    report.storage = storage.Snapshot();
    if (query.details)
    {
      report.associations.peers = associations.Snapshot(now);
    }
    report.associations.connections = connections.Snapshot();
    report.associations.connectionsReadNs = connections.LastReadingNs();
    report.changes = changes.Snapshot();
    report.pluginCost = cost.Snapshot();
    return report;
  }


  RecentReport IngestState::CollectSlowest(const RecentQuery& query)
  {
    RecentReport report = CollectRecent(query.windowSeconds);
    const auto matches = MakeStreamPredicate(query.filter, labels);
    RecentInstanceList& instances = report.ring.instances;
    instances.erase(std::remove_if(instances.begin(), instances.end(),
                                   [&](const RecentInstance& instance) {
                                     // Like /perf/stats, whose phases are those of stored instances.
                                     return instance.outcome != Outcome::Stored || !matches(instance.labels) ||
                                            instance.measurement.Phase(query.phase) ==
                                              InstanceMeasurement::kNotMeasured;
                                   }),
                    instances.end());
    report.matched = instances.size();
    instances = SelectSlowest(std::move(instances), query.phase, query.count);
    return report;
  }


  RecentReport IngestState::CollectRecent(int64_t seconds)
  {
    DrainForReader();
    RecentReport report;
    report.collected = true;
    report.nowNs = MonotonicNowNs();
    report.nowWallNs = WallNowNs();
    report.ring = recent.Snapshot(report.nowNs - seconds * 1000000000);
    report.matched = report.ring.instances.size();
    report.catalog = &labels;
    return report;
  }


  SlotsReport IngestState::CollectSlots(Window window)
  {
    DrainForReader();
    SlotsReport report;
    report.collected = true;
    report.windowsKept = stats.HasWindows();
    report.nowNs = MonotonicNowNs();
    report.nowWallNs = WallNowNs();
    if (report.windowsKept)
    {
      report.window = stats.SlotsOfWindow(window, report.nowNs);
    }
    return report;
  }


  void IngestState::Reset()
  {
    DrainForReader();  // what was stored before the reset is recorded as such
    const int64_t now = MonotonicNowNs();
    stats.Reset(now, WallNowNs());
    // The label values and combinations learned so far are forgotten: the senders to come are named
    // whatever filled the tables before. What still holds an id of before (a connection, a chain)
    // is named again at its next reading or instance.
    labels.Clear();
    connections.ForgetLabels();
    storage.Reset();
    associations.ResetStatistics(now);
    changes.ResetStatistics();
    cost.Reset();
    recent.Reset();
  }
}
