// The document of GET /perf/stats as the route writes it (WriteStats), parsed back strictly: what
// the tests read. A text that is not one whole JSON document, or that repeats a key of an object,
// fails the test that asked for it.
#pragma once

#include "Export/JsonExporter.h"

#include <gtest/gtest.h>
#include <json/reader.h>

#include <memory>
#include <string>

namespace IngestPerf
{
  inline std::string StatsText(const IngestReport& report, const StatsQuery& query)
  {
    MappedText text;
    JsonWriter writer(text);
    WriteStats(writer, report, query);
    EXPECT_EQ(0u, writer.OpenContainers());
    return std::string(text.Data(), text.Size());
  }

  inline Json::Value StatsDocument(const IngestReport& report, const StatsQuery& query)
  {
    const std::string text = StatsText(report, query);
    Json::CharReaderBuilder builder;
    Json::CharReaderBuilder::strictMode(&builder.settings_);  // duplicate keys refused too
    const std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    Json::Value document;
    std::string errors;
    EXPECT_TRUE(reader->parse(text.data(), text.data() + text.size(), &document, &errors)) << errors;
    return document;
  }
}
