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

  // A member name that is a string literal, for building answers: `value["count"_key]`. jsoncpp
  // then keeps the literal's pointer instead of a copy of the name: one allocation and one free
  // less per member (an answer of /perf/stats with every table full has about 5,000).
  inline Json::StaticString operator""_key(const char* name, size_t)
  {
    return Json::StaticString(name);
  }
}
