// IngestReport -> the JSON document of GET /perf/stats, written straight into the answer's text.
// Durations in milliseconds, sizes in bytes, rates per second; the schema is documented in
// docs/rest-api.md. Knows nothing of Orthanc.
#pragma once

#include "Export/JsonFigures.h"
#include "Metrics/StatsQuery.h"
#include "Platform/JsonText.h"
#include "Recording/IngestReport.h"

#include <json/value.h>

#include <string>

namespace IngestPerf
{
  // The whole document, written as it is built (no Json::Value tree): its members in the order of
  // the schema's sections, each histogram's as count, sum, mean, min, quantiles, max.
  void WriteStats(JsonWriter& out, const IngestReport& report, const StatsQuery& query);

  // "2026-11-23T12:00:00.123Z"
  std::string IsoUtc(int64_t wallNs);

  // The "sinceReset" block of /perf/stats and /perf/diagnosis: how much was stored since the reset,
  // and when the first and the last of it.
  Json::Value ExportSinceReset(const SinceReset& history);
}
