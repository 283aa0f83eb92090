// A few key figures of the plugin, published into Orthanc's own metrics for those who already scrape
// /tools/metrics-prometheus: per transport the stored instances and the p50/p99 of serverTotal since
// the start (or the last POST /perf/reset). Refreshed by Orthanc's refresh callback when its metrics
// are read, at most once a second, never on the ingest path. The plugin never reads Orthanc's
// metrics (or any of Orthanc's REST API) itself.
#pragma once

#include "Metrics/StatsSnapshot.h"
#include "Metrics/TimeWindows.h"
#include "Platform/PluginStatus.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  // The figures published into Orthanc's metrics, by name, per transport: since the start
  // "orthanc_ingest_perf_dicom_stored_instances_since_start", "..._server_total_p50_seconds_since_start",
  // "..._server_total_p99_seconds_since_start"; over the last minute (when lastMinute is given)
  // "..._instances_per_second_1m", "..._server_total_p50_seconds_1m", "..._server_total_p99_seconds_1m",
  // and for dicom "orthanc_ingest_perf_dicom_association_gap_p50_seconds_1m".
  std::vector<std::pair<std::string, float>> PublishedOrthancMetrics(const StatsSnapshot& snapshot,
                                                                     const WindowSnapshot* lastMinute = nullptr);

  // Registers the refresh callback that publishes them from ActiveIngestState().
  void RegisterPublishedOrthancMetrics(const PluginStatus& status);
}
