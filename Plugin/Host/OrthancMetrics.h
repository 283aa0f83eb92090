// What Orthanc's own metrics say that the plugin cannot see: how many REST API requests Orthanc is
// serving. Orthanc counts a request in "orthanc_rest_api_active_requests" from the start of its
// handler to its answer, for its own routes (POST /instances among them) and its internal calls
// (this reading is one), not for the routes of plugins. No Orthanc up to 1.12.7 tells a plugin when
// a request ends; this count, when it is 0, tells that every request ingesting through the REST API
// is over, so that a record its thread left open (a body Orthanc could not parse, a failed store)
// has its outcome at once instead of when that thread serves its next request.
//
// The other way, a few key figures of the plugin are published into Orthanc's own metrics, for
// those who already scrape /tools/metrics-prometheus: per transport the stored instances and the
// p50/p99 of serverTotal since the start (or the last POST /perf/reset). Refreshed by Orthanc's
// refresh callback when its metrics are read, at most once a second, never on the ingest path.
#pragma once

#include "Correlation/StorageCondition.h"
#include "Metrics/StatsSnapshot.h"
#include "Metrics/TimeWindows.h"
#include "Platform/PluginStatus.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  // The value of orthanc_rest_api_active_requests in Orthanc's Prometheus text, -1 when absent or
  // malformed.
  int64_t ParseActiveRestRequests(const std::string& prometheusText);

  // REST API requests in progress besides this reading, -1 when Orthanc cannot say ("MetricsEnabled"
  // false, or the metric is missing).
  int64_t OtherRestRequestsInProgress();

  // What Orthanc's index holds (GET /statistics: TotalDiskSize, CountPatients); false if unknown.
  bool ReadStorageUsage(StorageUsage& usage);

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
