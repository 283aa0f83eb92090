// RecentReport -> GET /perf/trace: the recent instances as Chrome Trace Event JSON (Perfetto,
// chrome://tracing). Process 1: a track per ingesting thread, a slice per instance (serverTotal)
// with its phases nested inside, and a counter of instances stored per second. Process 2: the
// C-STORE chains of each calling AET, one track per chain that never overlaps itself, with the
// associationGap before each instance. Timestamps in microseconds from `otherData.origin`.
#pragma once

#include "Export/SlowestExporter.h"
#include "Platform/JsonText.h"
#include "Recording/IngestReport.h"

#include <cstdint>

namespace IngestPerf
{
  constexpr int64_t kMaxTraceSeconds = 3600;

  // The whole document, written straight into the answer's text (JsonWriter), with no Json::Value
  // tree: a full ring of 4,096 instances over an hour is tens of thousands of events and a few
  // hundred thousand values, whose tree's nodes stayed in the malloc arena of the HTTP thread that
  // built them (+116 MB of Orthanc's resident memory after 200 traces). The events are kept as
  // plain records (pages of their own), sorted by index, and written one after the other. Members
  // in this order: displayTimeUnit, otherData (origin, seconds, instances, threads, ring), then
  // traceEvents (the metadata events, then the others per track in time order); each event's as
  // name, cat, ph, ts, dur, pid, tid, args.
  void WriteTrace(JsonWriter& out, const RecentReport& report, int64_t seconds, bool hashPeers);
}
