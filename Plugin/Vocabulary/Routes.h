// The REST routes of the plugin, one table: the path a client uses, the method, and what each
// answers. Rest/RestRoutes registers every route from it with one guard; GET /perf/vocabulary
// lists it, and the tests read that list instead of keeping their own.
#pragma once

#include <cstddef>

namespace IngestPerf
{
  enum class Route
  {
    Stats,
    Metrics,
    Slowest,
    Trace,
    Diagnosis,
    Slots,
    Vocabulary,
    Reset,
    Ui,
    UiFile,
    Count
  };

  constexpr size_t kRouteCount = static_cast<size_t>(Route::Count);

  enum class RouteMethod
  {
    Get,
    Post
  };

  struct RouteDefinition
  {
    const char* path;     // as a client writes it; "{file}" stands for a part of the client's choosing
    const char* pattern;  // as registered with Orthanc (a regular expression)
    RouteMethod method;   // the only one it answers; any other gets 405
    const char* answer;   // what it answers
  };

  const RouteDefinition& DefinitionOf(Route route);

  // "GET", "POST".
  const char* RouteMethodName(RouteMethod method);
}
