// The documents of the routes as they write them (WriteStats, WriteSlowest, WriteTrace,
// WriteSlots), parsed back strictly: what the tests read. A text that is not one whole JSON
// document, or that repeats a key of an object, fails the test that asked for it.
#pragma once

#include "Export/JsonExporter.h"

#include <gtest/gtest.h>
#include <json/reader.h>

#include <memory>
#include <string>

namespace IngestPerf
{
  // The whole text that `write(JsonWriter&)` writes (every container closed).
  template <typename Write>
  std::string WrittenText(Write write)
  {
    MappedText text;
    JsonWriter writer(text);
    write(writer);
    EXPECT_EQ(0u, writer.OpenContainers());
    return std::string(text.Data(), text.Size());
  }

  // `text` parsed strictly: one whole document, no key repeated (a failure fails the test).
  inline Json::Value StrictlyParsed(const std::string& text)
  {
    Json::CharReaderBuilder builder;
    Json::CharReaderBuilder::strictMode(&builder.settings_);  // duplicate keys refused too
    const std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    Json::Value document;
    std::string errors;
    EXPECT_TRUE(reader->parse(text.data(), text.data() + text.size(), &document, &errors)) << errors;
    return document;
  }

  // The document that `write(JsonWriter&)` writes, parsed strictly.
  template <typename Write>
  Json::Value WrittenDocument(Write write)
  {
    return StrictlyParsed(WrittenText(write));
  }

  inline std::string StatsText(const IngestReport& report, const StatsQuery& query)
  {
    return WrittenText([&](JsonWriter& writer) { WriteStats(writer, report, query); });
  }

  inline Json::Value StatsDocument(const IngestReport& report, const StatsQuery& query)
  {
    return StrictlyParsed(StatsText(report, query));
  }
}
