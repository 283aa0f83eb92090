// RecentReport -> GET /perf/trace: the recent instances as Chrome Trace Event JSON (Perfetto,
// chrome://tracing). Process 1: a track per ingesting thread, a slice per instance (serverTotal)
// with its phases nested inside, and a counter of instances stored per second. Process 2: the
// C-STORE chains of each calling AET, one track per chain that never overlaps itself, with the
// associationGap before each instance. Timestamps in microseconds from `otherData.origin`.
#pragma once

#include "Recording/IngestReport.h"

#include <json/value.h>

#include <cstdint>

namespace IngestPerf
{
  constexpr int64_t kMaxTraceSeconds = 3600;

  Json::Value ExportTrace(const RecentReport& report, int64_t seconds, bool hashPeers);
}
