// GET /perf/stats and POST /perf/reset: parse, call IngestPipeline::Collect or Reset, answer.
// Registered without Orthanc's global plugin lock: the handlers only read snapshots (or zero
// counters), so they never stall an ingest; a GET changes nothing.
#pragma once

#include "Export/JsonExporter.h"

#include <json/value.h>

#include <cstdint>
#include <string>

namespace IngestPerf
{
  struct PluginStatus;

  // The routes answer from ActivePipeline() (null when the plugin is disabled); `status` must
  // outlive them.
  void RegisterRestRoutes(const PluginStatus& status);

  // Percent-decodes a query key or value ('+' is a space).
  std::string DecodeQueryComponent(const char* text);

  // Validates the GET arguments of /perf/stats. On failure, fills `error` with the JSON reason.
  bool ParseStatsArguments(StatsQuery& filter, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values);
}
