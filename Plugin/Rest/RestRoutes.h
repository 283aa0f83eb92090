// The /perf routes: parse (400 with a JSON reason), call the pipeline (Collect, CollectSlowest,
// CollectRecent, CollectSeries or Reset), answer; and the page of /perf/ui/ (Ui/UiFiles).
// Registered without Orthanc's global plugin lock: the handlers only read snapshots (or zero
// counters), so they never stall an ingest; a GET changes nothing.
#pragma once

#include "Export/JsonExporter.h"
#include "Metrics/StatsQuery.h"

#include <json/value.h>

#include <cstdint>
#include <string>

namespace IngestPerf
{
  struct PluginStatus;

  // The routes answer from ActivePipeline() (null when the plugin is disabled); `status` must
  // outlive them.
  void RegisterRestRoutes(const PluginStatus& status);

  // Where the page is, relative to Orthanc's root (GET /perf/ui redirects there).
  constexpr const char* kUiPage = "/perf/ui/index.html";

  // Percent-decodes a query key or value ('+' is a space).
  std::string DecodeQueryComponent(const char* text);

  // What GET /perf/metrics collects: every stream, with the phases its text shows of each (no
  // more), without the report's details it does not show; the same text as a whole collection.
  StatsQuery MetricsQuery();

  // Validates the GET arguments of /perf/stats. On failure, fills `error` with the JSON reason.
  bool ParseStatsArguments(StatsQuery& filter, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values);

  // GET /perf/slowest: n (1..1000), window ("90s", "5m", "1h": 1 s to 24 h), phase, and the
  // transport and label filters of /perf/stats (not groupBy).
  bool ParseSlowestArguments(RecentQuery& query, Json::Value& error, uint32_t count, const char* const* keys,
                             const char* const* values);

  // GET /perf/diagnosis: the arguments of /perf/stats but groupBy; without a window or a label
  // filter, the window is 5m.
  bool ParseDiagnosisArguments(StatsQuery& query, Json::Value& error, uint32_t count, const char* const* keys,
                               const char* const* values);

  // GET /perf/series: window (1m, 5m, 15m, 1h; default 1h) and transport (as for /perf/stats); no
  // label filter, no groupBy (the windows are kept per transport only).
  bool ParseSeriesArguments(StatsQuery& query, Json::Value& error, uint32_t count, const char* const* keys,
                            const char* const* values);

  // GET /perf/trace: seconds (1..3600, default 60).
  bool ParseTraceArguments(int64_t& seconds, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values);
}
