// The vocabulary (Vocabulary/) as JSON: the whole of it for GET /perf/vocabulary, and the
// "definitions" block of /perf/stats. Lists keep the vocabulary's order (a JSON object does not),
// so the page, the report and the tests read names and order from here and keep no copy.
#pragma once

#include <json/value.h>

namespace IngestPerf
{
  // GET /perf/vocabulary: transports, phases (with the transports each exists on, its place in an
  // instance's timeline and its parent), outcomes, failure reasons, label dimensions, windows and
  // routes. Schema in docs/rest-api.md.
  Json::Value ExportVocabulary();

  // The "definitions" of /perf/stats: the phases, outcomes and failure reasons by name, and "order",
  // each list's names in the vocabulary's order (for a reader of a saved answer).
  const Json::Value& ExportDefinitions();
}
