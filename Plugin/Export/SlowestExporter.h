// RecentReport -> the JSON document of GET /perf/slowest: each instance with its whole timeline
// (milliseconds), labels as exported (IngestPerf.HashPeers), Orthanc ID, thread and arrival; and
// how far back the ring reaches. Written straight into the answer's text (JsonWriter), with no
// Json::Value tree: a thousand instances are about 50,000 values, whose tree's nodes would stay in
// the malloc arena of the HTTP thread that built them. Schema in docs/rest-api.md. Knows nothing of
// Orthanc.
#pragma once

#include "Metrics/StatsQuery.h"
#include "Platform/JsonText.h"
#include "Recording/IngestReport.h"

#include <json/value.h>

#include <memory>
#include <optional>
#include <string>

namespace IngestPerf
{
  // The whole document, its members in this order: phase, n, window, windowSeconds, units, matched,
  // ring, instances (each as WriteRecentInstance writes it).
  void WriteSlowest(JsonWriter& out, const RecentReport& report, const RecentQuery& query, bool hashPeers);

  // What the `parts` member of an instance holds.
  enum class RecentParts
  {
    EachPhase,             // each split phase's parts, by phase ({} when none was split): /perf/slowest
    ServerTotalWhenSplit,  // serverTotal's own parts when it was split, else as EachPhase: /perf/trace
  };

  // One instance of the ring, as /perf/slowest lists it and /perf/trace shows in its arguments: an
  // object of instanceId, arrival, thread, transport, outcome, storedBytes, phases (each measured,
  // in the vocabulary's order), parts, labels (each dimension but the transport, in the
  // vocabulary's order, exported through Labels/PeerPseudonym).
  void WriteRecentInstance(JsonWriter& out, const RecentInstance& instance, const LabelCatalog& catalog, bool hashPeers,
                           RecentParts parts = RecentParts::EachPhase);

  // The parts of one split phase of one instance (measurement.HasParts(phase)), in ms: an object of
  // onCpu, waitingForCpu (absent when the kernel gave no run delay: then in blocked), blocked.
  void WriteInstanceParts(JsonWriter& out, const InstanceMeasurement& measurement, Phase phase);

  // The ring, an object of capacity, held, pushed, skipped, the oldest arrival it still holds
  // (oldest, reachesBackSeconds), then coversWindow when given.
  void WriteRing(JsonWriter& out, const RecentReport& report, std::optional<bool> coversWindow = std::nullopt);
}
