// What a reader asks of the aggregate: which transports, which label values, grouped by which
// label. Parsed from REST parameters by the routes, answered by IngestState::Collect, shown by
// the exporters.
#pragma once

#include "Labels/InstanceLabels.h"
#include "Labels/LabelCatalog.h"
#include "Metrics/RecentInstances.h"
#include "Metrics/StatsSnapshot.h"
#include "Metrics/TimeWindows.h"
#include "Vocabulary/IngestVocabulary.h"

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  static_assert(kPhaseCount <= 32, "StatsQuery::eachStreamPhases holds one bit per phase");

  struct StatsQuery
  {
    enum class Scope
    {
      Every,      // each transport, then "all"
      Single,     // only `transport`
      MergedOnly  // only "all"
    };
    Scope scope = Scope::Every;
    Transport transport = Transport::Rest;

    // Label filters other than transport (exact values, "(other)" and "(none)" included), and
    // the dimension to group by. Either one switches to the labelled streams.
    std::vector<std::pair<LabelDimension, std::string>> labels;
    bool hasGroupBy = false;
    LabelDimension groupBy = LabelDimension::Transport;
    // IngestPerf.HashPeers: a filter on a peer label may also name a value by its pseudonym.
    bool hashedPeers = false;
    // Every labelled stream on its own, with all its labels (GET /perf/metrics): its outcomes and
    // counters, and the phases of `eachStreamPhases` (bit p: Phase p; the others, the parts and the
    // sizes left empty).
    bool eachStream = false;
    uint32_t eachStreamPhases = ~uint32_t(0);
    // The rest of the report, which /perf/metrics does not show: the 1m and 5m windows of the answer
    // without window or labels, the associations' rows and gaps, the failing streams.
    bool details = true;
    // The quantiles of each phase's parts per transport since the reset (StatsSnapshot::partQuantiles),
    // which only the JSON of /perf/stats without window or labels shows: 144 histograms to copy.
    bool partQuantiles = true;
    // window=1m|5m|15m|1h: the transports over that recent window instead of since the reset. With
    // label filters or groupBy, answered from the ring of recent instances (GroupRecentInstances).
    bool hasWindow = false;
    Window window = Window::OneMinute;

    bool UsesStreams() const { return !labels.empty() || hasGroupBy; }
    // Whether the answer lists this transport on its own (every one, or the one asked for).
    bool ListsTransport(Transport candidate) const
    {
      return scope == Scope::Every || (scope == Scope::Single && candidate == transport);
    }
    // The label to group by, nullptr for none.
    const LabelDimension* GroupBy() const { return hasGroupBy ? &groupBy : nullptr; }
  };

  // GET /perf/slowest: the `count` instances with the longest `phase` among the recent ones stored
  // in the last `windowSeconds` that match `filter` (transport and label filters, never groupBy).
  struct RecentQuery
  {
    static constexpr size_t kMaxCount = 1000;
    static constexpr int64_t kMaxWindowSeconds = 86400;

    StatsQuery filter;
    Phase phase = Phase::ServerTotal;
    size_t count = 20;
    int64_t windowSeconds = 300;
    std::string window = "5m";  // as given, echoed in the answer
  };

  // Which labelled streams a query selects (transport scope and label filters).
  std::function<bool(const InstanceLabels&)> MakeStreamPredicate(const StatsQuery& query, const LabelCatalog& catalog);

  // A window with label filters or groupBy: the instances of the ring of recent instances stored
  // since `fromNs` (the window's start) that match the query, per transport and per value of the
  // label grouped by, each named as when it was recorded (an ageing of the labels since does not
  // move it to "(other)"). Exact for the window when the ring holds all of it (recentComplete);
  // else for its last part, from recentFromNs. The ring keeps stored and duplicate instances.
  GroupedSnapshot GroupRecentInstances(const RecentSnapshot& ring, const StatsQuery& query, const LabelCatalog& catalog,
                                       int64_t fromNs);
}
