#include "Vocabulary/Routes.h"

namespace IngestPerf
{
  namespace
  {
    const RouteDefinition kRoutes[kRouteCount] = {
      {"/perf/stats", "/perf/stats", RouteMethod::Get,
       "the statistics: per transport, or per label with filters and groupBy, since the reset or over a window "
       "(JSON, docs/rest-api.md)"},
      {"/perf/metrics", "/perf/metrics", RouteMethod::Get,
       "the same statistics in the Prometheus text format, one stream per label set (docs/prometheus.md)"},
      {"/perf/slowest", "/perf/slowest", RouteMethod::Get,
       "the slowest recent instances by a phase, each with its whole timeline (JSON)"},
      {"/perf/trace", "/perf/trace", RouteMethod::Get,
       "the recent instances as a Chrome Trace Event file (Perfetto, chrome://tracing)"},
      {"/perf/diagnosis", "/perf/diagnosis", RouteMethod::Get,
       "the bottleneck named, with its evidence and the change that removes it (JSON, docs/diagnosis.md)"},
      {"/perf/slots", "/perf/slots", RouteMethod::Get, "one time window slot by slot, per transport (JSON)"},
      {"/perf/vocabulary", "/perf/vocabulary", RouteMethod::Get,
       "this vocabulary: transports, phases, outcomes, labels, windows and routes (JSON)"},
      {"/perf/reset", "/perf/reset", RouteMethod::Post,
       "starts every statistic again from zero (what started before is no longer counted)"},
      {"/perf/ui", "/perf/ui", RouteMethod::Get, "redirects to the page, /perf/ui/index.html"},
      {"/perf/ui/{file}", "/perf/ui/(.*)", RouteMethod::Get, "the files of the page (docs/ui.md)"},
    };
  }


  const RouteDefinition& DefinitionOf(Route route)
  {
    return kRoutes[static_cast<size_t>(route)];
  }


  const char* RouteMethodName(RouteMethod method)
  {
    return method == RouteMethod::Post ? "POST" : "GET";
  }
}
