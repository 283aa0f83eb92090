// GET /perf/stats and POST /perf/reset. Registered without Orthanc's global plugin lock: the
// handlers only read snapshots (or zero counters), so they never stall an ingest.
#pragma once

#include "JsonExporter.h"

#include <json/value.h>

#include <cstdint>

namespace IngestPerf
{
  class IngestStats;
  class ThreadTimelines;
  class ChangeCorrelator;
  class AssociationTracker;
  struct PluginStatus;

  struct RestTargets
  {
    IngestStats* stats;                // null when the plugin is disabled
    ThreadTimelines* timelines;        // idem
    ChangeCorrelator* correlator;      // idem
    AssociationTracker* associations;  // idem
    const PluginStatus* status;
  };

  void RegisterRestRoutes(const RestTargets& targets);

  // Validates the GET arguments of /perf/stats. On failure, fills `error` with the JSON reason.
  bool ParseStatsArguments(ExportFilter& filter, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values);
}
