// The objects of one data flow, built together from the configuration: per-thread timelines, the
// recorder with its correlation tables, and the aggregate. The entry point, the tests and the
// benchmarks build the same pipeline.
#pragma once

#include "Correlation/AssociationTracker.h"
#include "Correlation/ChangeCorrelator.h"
#include "Correlation/ChangeQueueStats.h"
#include "Host/Configuration.h"
#include "Metrics/StatsQuery.h"
#include "Recording/IngestReport.h"
#include "Recording/IngestRecorder.h"
#include "Metrics/IngestStats.h"
#include "Labels/LabelCatalog.h"
#include "Metrics/PluginCost.h"
#include "Metrics/RecentInstances.h"
#include "Metrics/StorageStats.h"
#include "Timeline/ThreadTimelines.h"

namespace IngestPerf
{
  struct IngestPipeline;

  // The one pipeline every Orthanc callback reaches. Set by the entry point before it registers
  // anything and never changed afterwards (Orthanc may run a callback until the library is
  // unloaded); null while the plugin is disabled.
  IngestPipeline* ActivePipeline();
  void SetActivePipeline(IngestPipeline* pipeline);

  struct IngestPipeline
  {
    explicit IngestPipeline(const Configuration& configuration);

    // Everything a reader may show, for this query, as plain copies: nothing is changed.
    // restRequestsInProgress: how many REST API requests Orthanc has in progress besides the
    // reader's own, -1 when it cannot say; asked after the open records are read. When none is, the
    // records of REST requests still open are over: their outcomes are counted in the REST
    // transport (not in groups, which are read from the streams) rather than shown as open.
    IngestReport Collect(const StatsQuery& query, const PluginStatus& status, OpenConnections connections,
                         const std::function<int64_t()>& restRequestsInProgress = nullptr) const;
    // GET /perf/slowest: the slowest recent instances that match the query.
    RecentReport CollectSlowest(const RecentQuery& query) const;
    // GET /perf/trace: every recent instance stored in the last `seconds`, oldest first.
    RecentReport CollectRecent(int64_t seconds) const;
    // GET /perf/series: the slots of one time window, each on its own.
    SeriesReport CollectSeries(Window window) const;
    // POST /perf/reset: statistics back to zero; correlation state (open chains, pending changes) kept.
    void Reset();

    ThreadTimelines timelines;
    LabelCatalog labels;
    ChangeCorrelator correlator;
    AssociationTracker associations;
    IngestStats stats;
    StorageStats storage;
    ChangeQueueStats changes;
    PluginCost cost;
    RecentInstances recent;
    IngestRecorder recorder;
  };
}
