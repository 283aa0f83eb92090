// The /perf routes, registered from the table of Vocabulary/Routes, each through one guard: parse
// (Rest/RouteArguments: 400 with a JSON reason), read the ingest state (Collect, CollectSlowest,
// CollectRecent, CollectSlots or Reset), answer; and the page of /perf/ui/ (Ui/UiFiles).
// Registered without Orthanc's global plugin lock: the handlers only read snapshots (or zero
// counters), so they never stall an ingest; a GET changes nothing.
#pragma once

#include "Metrics/StatsQuery.h"

namespace IngestPerf
{
  struct PluginStatus;

  // The routes answer from ActiveIngestState() (null when the plugin is disabled); `status` must
  // outlive them.
  void RegisterRestRoutes(const PluginStatus& status);

  // Where the page is, relative to Orthanc's root (GET /perf/ui redirects there).
  constexpr const char* kUiPage = "/perf/ui/index.html";

  // What GET /perf/metrics collects: every stream, with the phases its text shows of each (no
  // more), without the report's details it does not show; the same text as a whole collection.
  StatsQuery MetricsQuery();
}
