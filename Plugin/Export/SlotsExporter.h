// SlotsReport -> the JSON document of GET /perf/slots: one time window slot by slot, per
// transport, each slot with its UTC start, the seconds of it covered, the instances stored, their
// bytes and per phase count, mean, p50 and p99 (milliseconds). Schema in docs/rest-api.md. Knows
// nothing of Orthanc.
#pragma once

#include "Metrics/StatsQuery.h"
#include "Platform/JsonText.h"
#include "Recording/IngestReport.h"

namespace IngestPerf
{
  // `query`: its window, and which transports are listed (scope and transport). Written straight
  // into the answer's text (JsonWriter), with no Json::Value tree: an hour with every transport
  // busy is 305 slots of up to 11 phases, about 19,000 values (0.6 MB of text). Members in this
  // order: window, slotSeconds, fullSlots, seconds, now, droppedAtRotation, straddledRotation,
  // units, transports (each listed transport under its name, then "all"); each slot's as start,
  // seconds, stored, bytes, phases (in the vocabulary's order: count, mean, p50, p99).
  void WriteSlots(JsonWriter& out, const SlotsReport& report, const StatsQuery& query);
}
