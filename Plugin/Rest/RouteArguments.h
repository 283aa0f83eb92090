// The arguments of the /perf routes, from Orthanc's GET keys and values (still percent-encoded in
// 1.10.1) to a query: every refusal is a JSON reason with the parameter and what it allows, which
// the route answers with HTTP 400. Parsers of outside input, fuzzed (Fuzzing/StatsArgumentsFuzzer).
#pragma once

#include "Metrics/StatsQuery.h"

#include <json/value.h>

#include <cstdint>
#include <string>

namespace IngestPerf
{
  // Percent-decodes a query key or value ('+' is a space).
  std::string DecodeQueryComponent(const char* text);

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

  // GET /perf/slots: window (1m, 5m, 15m, 1h; default 1h) and transport (as for /perf/stats); no
  // label filter, no groupBy (the windows are kept per transport only).
  bool ParseSlotsArguments(StatsQuery& query, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values);

  // GET /perf/trace: seconds (1..3600, default 60).
  bool ParseTraceArguments(int64_t& seconds, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values);

  // A route that takes no parameter (/perf/metrics, /perf/vocabulary): any is refused, as
  // /perf/stats refuses an unknown one.
  bool ParseNoArguments(Json::Value& error, uint32_t count, const char* const* keys, const char* const* values,
                        const char* path);
}
