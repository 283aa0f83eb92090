// StatsSnapshot -> the JSON document of GET /perf/stats. Durations in milliseconds, sizes in
// bytes, rates per second; the schema is documented in the README.
#pragma once

#include "IngestCatalogue.h"
#include "PluginStatus.h"
#include "StatsSnapshot.h"
#include "ThreadTimelines.h"

#include <json/value.h>

namespace IngestPerf
{
  struct ExportFilter
  {
    enum class Scope
    {
      Every,      // each transport, then "all"
      Single,     // only `transport`
      MergedOnly  // only "all"
    };
    Scope scope = Scope::Every;
    Transport transport = Transport::Rest;
  };

  struct ExportInput
  {
    const StatsSnapshot& snapshot;
    const OpenRecords& openRecords;
    const PluginStatus& status;
    uint64_t correlationSkipped;
    uint64_t associationSkipped;
  };

  Json::Value ExportStats(const ExportInput& input, const ExportFilter& filter);

  // Milliseconds with 0.1 microsecond resolution.
  double NanosecondsToMilliseconds(int64_t ns);

  Json::Value ExportHistogram(const HistogramSnapshot& histogram, bool durations);
}
