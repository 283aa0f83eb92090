// RecentReport -> the JSON document of GET /perf/slowest: each instance with its whole timeline
// (milliseconds), labels as exported (IngestPerf.HashPeers), Orthanc ID, thread and arrival; and
// how far back the ring reaches. Schema in docs/rest-api.md. Knows nothing of Orthanc.
#pragma once

#include "Metrics/StatsQuery.h"
#include "Recording/IngestReport.h"

#include <json/value.h>

namespace IngestPerf
{
  Json::Value ExportSlowest(const RecentReport& report, const RecentQuery& query, bool hashPeers);

  // One instance of the ring, as /perf/slowest lists it and /perf/trace shows in its arguments.
  Json::Value ExportRecentInstance(const RecentInstance& instance, const LabelCatalog& catalog, bool hashPeers);

  // The ring: capacity, records held, and the oldest arrival it still holds.
  Json::Value ExportRing(const RecentReport& report);
}
