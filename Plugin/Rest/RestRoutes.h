// GET /perf/stats and POST /perf/reset. Registered without Orthanc's global plugin lock: the
// handlers only read snapshots (or zero counters), so they never stall an ingest.
#pragma once

#include "Export/JsonExporter.h"

#include <json/value.h>

#include <cstdint>
#include <string>

namespace IngestPerf
{
  struct IngestPipeline;
  struct PluginStatus;

  // `pipeline` is null when the plugin is disabled. Both must outlive the routes.
  void RegisterRestRoutes(IngestPipeline* pipeline, const PluginStatus& status);

  // What GET /perf/stats answers: snapshots of the running pipeline, exported. `connections` are
  // the open C-STORE connections, read by the caller (the route reads /proc; the benchmarks pass
  // none).
  Json::Value StatsAnswer(IngestPipeline& pipeline, const PluginStatus& status, const ExportFilter& filter,
                          OpenConnections connections);

  // Percent-decodes a query key or value ('+' is a space).
  std::string DecodeQueryComponent(const char* text);

  // Validates the GET arguments of /perf/stats. On failure, fills `error` with the JSON reason.
  bool ParseStatsArguments(ExportFilter& filter, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values);
}
