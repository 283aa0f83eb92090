#include "Recording/IngestPipeline.h"

#include "Timeline/MonotonicClock.h"

namespace IngestPerf
{
  namespace
  {
    IngestPipeline* active = nullptr;
  }


  IngestPipeline* ActivePipeline()
  {
    return active;
  }


  void SetActivePipeline(IngestPipeline* pipeline)
  {
    active = pipeline;
  }


  IngestPipeline::IngestPipeline(const Configuration& configuration) :
    timelines(configuration.maxThreads),
    labels(configuration.maxLabelValues),
    correlator(configuration.changeTableSize),
    associations(configuration.maxPeers, static_cast<int64_t>(configuration.dicomScpTimeoutSeconds) * 1000000000),
    stats(MonotonicNowNs(), WallNowNs(), configuration.maxSeries, MonotonicNowNs),
    recorder(stats, labels, correlator, associations, changes, configuration.overwriteInstances)
  {
  }


  IngestReport IngestPipeline::Collect(const StatsQuery& query, const PluginStatus& status, OpenConnections connections,
                                       const std::function<int64_t()>& restRequestsInProgress) const
  {
    const int64_t now = MonotonicNowNs();
    IngestReport report;
    report.status = &status;
    report.collected = true;
    report.snapshot = stats.Snapshot(now);
    // After the statistics: a record closed in between is then in neither (never in both).
    report.openRecords = timelines.CountOpen(restRequestsInProgress);
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      report.snapshot.transports[static_cast<size_t>(Transport::Rest)].outcomes[o] +=
        report.openRecords.endedWithRequest[o];
    }
    report.correlationSkipped = correlator.Skipped();
    report.correlationEvicted = correlator.Evicted();
    report.associationSkipped = associations.Skipped();
    report.catalog = &labels;
    const StreamTable& table = stats.Series();
    report.streams = StreamInfo{table.Capacity(), table.Used(), table.Overflowed(), StreamTable::BytesPerSeries()};
    if (query.UsesStreams())
    {
      report.grouped = stats.SnapshotGrouped(MakeStreamPredicate(query, labels), query.GroupBy());
    }
    if (query.eachStream)
    {
      report.eachStream = stats.SnapshotEachSeries();
    }
    report.windowsKept = stats.HasWindows();
    if (report.windowsKept && query.hasWindow)
    {
      report.window = stats.SnapshotWindow(query.window, now);
    }
    else if (report.windowsKept && !query.UsesStreams())
    {
      report.recent = {stats.SnapshotWindow(Window::OneMinute, now), stats.SnapshotWindow(Window::FiveMinutes, now)};
    }
    report.storage = storage.Snapshot();
    if (connections.available)
    {
      const std::map<std::string, uint64_t>& open = connections.byRemoteIp;
      report.associations.peers = associations.Snapshot(
        now, [&](LabelId address) { return open.count(labels.Name(LabelDimension::RemoteIp, address)) != 0; },
        connections.readNs);
    }
    else
    {
      report.associations.peers = associations.Snapshot(now);
    }
    report.associations.connections = std::move(connections);
    report.associations.gaps = stats.SnapshotSeriesPhase(
      Phase::AssociationGap, [](const InstanceLabels& stream) { return stream.GetTransport() == Transport::Dicom; });
    report.changes = changes.Snapshot();
    report.pluginCost = cost.Snapshot();
    return report;
  }


  void IngestPipeline::Reset()
  {
    stats.Reset(MonotonicNowNs(), WallNowNs());
    storage.Reset();
    associations.ResetStatistics();
    changes.ResetStatistics();
    cost.Reset();
  }
}
