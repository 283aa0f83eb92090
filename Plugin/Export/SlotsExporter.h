// SlotsReport -> the JSON document of GET /perf/slots: one time window slot by slot, per
// transport, each slot with its UTC start, the seconds of it covered, the instances stored, their
// bytes and per phase count, mean, p50 and p99 (milliseconds). Schema in docs/rest-api.md. Knows
// nothing of Orthanc.
#pragma once

#include "Metrics/StatsQuery.h"
#include "Recording/IngestReport.h"

#include <json/value.h>

namespace IngestPerf
{
  // `query`: its window, and which transports are listed (scope and transport).
  Json::Value ExportSlots(const SlotsReport& report, const StatsQuery& query);
}
