// The text of a JSON answer, written straight from a Json::Value into the answer's pages: the same
// bytes as jsoncpp's StreamWriterBuilder with indentation "  ", 4 decimal places and its other
// defaults (keys in the tree's order, arrays one element per line, non-ASCII escaped as \uXXXX,
// NaN as null), without its std::ostream, whose per-token calls cost a third of a /perf/stats
// answer with every table full.
#pragma once

#include "Platform/MappedText.h"

#include <json/value.h>

namespace IngestPerf
{
  void WriteJsonText(MappedText& text, const Json::Value& value);
}
