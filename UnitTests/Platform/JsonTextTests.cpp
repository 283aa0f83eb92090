// WriteJsonText: the same bytes as jsoncpp's StreamWriterBuilder with the answers' settings, on
// every kind of value, on random trees and numbers, and on a /perf/stats answer.
#include "Platform/JsonText.h"

#include "Export/JsonExporter.h"
#include "../Export/StatsDocument.h"
#include "Recording/IngestState.h"

#include <gtest/gtest.h>

#include <json/writer.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

using namespace IngestPerf;

namespace
{
  // What the answers were written with before WriteJsonText (OrthancSdk::AnswerJson).
  std::string JsoncppText(const Json::Value& value)
  {
    Json::StreamWriterBuilder builder;
    builder["indentation"] = "  ";
    builder["precision"] = 4;
    builder["precisionType"] = "decimal";
    return Json::writeString(builder, value);
  }

  std::string OurText(const Json::Value& value)
  {
    MappedText text;
    WriteJsonText(text, value);
    return std::string(text.Data(), text.Size());
  }

  Json::Value RandomTree(std::mt19937_64& random, int depth)
  {
    std::uniform_int_distribution<int> kind(0, depth > 0 ? 8 : 6);
    switch (kind(random))
    {
      case 0:
        return Json::Value();
      case 1:
        return Json::Value(static_cast<Json::Int64>(random()));
      case 2:
        return Json::Value(static_cast<Json::UInt64>(random()));
      case 3:
        return Json::Value(
          std::ldexp(static_cast<double>(random() % 2000000) - 1000000.0, static_cast<int>(random() % 60) - 40));
      case 4:
        return Json::Value(random() % 2 == 0);
      case 5:
      case 6:
      {
        std::string text;
        for (size_t i = random() % 12; i > 0; i--)
        {
          text += static_cast<char>(random() % 256);
        }
        return Json::Value(text);
      }
      case 7:
      {
        Json::Value array = Json::arrayValue;
        for (size_t i = random() % 5; i > 0; i--)
        {
          array.append(RandomTree(random, depth - 1));
        }
        return array;
      }
      default:
      {
        Json::Value object = Json::objectValue;
        for (size_t i = random() % 5; i > 0; i--)
        {
          object["k" + std::to_string(random() % 100)] = RandomTree(random, depth - 1);
        }
        return object;
      }
    }
  }
}


TEST(JsonText, EveryKindOfValueAsJsoncppWritesIt)
{
  Json::Value document;
  document["null"] = Json::Value();
  document["true"] = true;
  document["false"] = false;
  document["int"] = -42;
  document["largest"] = std::numeric_limits<Json::Int64>::max();
  document["smallest"] = std::numeric_limits<Json::Int64>::min();
  document["unsigned"] = std::numeric_limits<Json::UInt64>::max();
  document["emptyArray"] = Json::arrayValue;
  document["emptyObject"] = Json::objectValue;
  document["emptyString"] = "";
  document["nested"]["array"].append(1);
  document["nested"]["array"].append(Json::arrayValue);
  document["nested"]["array"].append(Json::objectValue);
  document["nested"]["array"].append("two");
  document["nested"]["array"][4]["x"] = 1.5;
  document["nested"]["array"][5].append(Json::Value());
  document["escapes"] = std::string("\"\\/\b\f\n\r\t\x01\x1f\x7f", 12) + std::string(1, '\0') + "end";
  document["utf8"] = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  document["malformed"] = "\x80\xc3\xe2\x82 \xed\xa0\x80 \xc0\xaf \xf8 \xff";
  document["key with \"quotes\" and \xc3\xa9"] = 1;
  document[std::string("nul\0key", 7)] = 2;
  for (double value : {0.0,
                       -0.0,
                       1.0,
                       -1.0,
                       0.1,
                       2.5,
                       3.00004,
                       3.00005,
                       3.00006,
                       0.03125,
                       0.09375,
                       -0.00001,
                       123456789.123456,
                       1e15,
                       1e300,
                       -1.7976931348623157e308,
                       4.9e-324,
                       std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity()})
  {
    document["reals"].append(value);
  }
  EXPECT_EQ(JsoncppText(document), OurText(document));
  for (const Json::Value& root : {Json::Value(), Json::Value(Json::arrayValue), Json::Value(Json::objectValue),
                                  Json::Value(7), Json::Value("text"), document["nested"]["array"]})
  {
    EXPECT_EQ(JsoncppText(root), OurText(root));
  }
}


TEST(JsonText, RandomTreesAndNumbersAsJsoncppWritesThem)
{
  std::mt19937_64 random(22);
  for (int i = 0; i < 2000; i++)
  {
    const Json::Value tree = RandomTree(random, 4);
    ASSERT_EQ(JsoncppText(tree), OurText(tree)) << "tree " << i;
  }
  Json::Value reals = Json::arrayValue;
  std::uniform_real_distribution<double> uniform(-1000.0, 1000.0);
  for (int i = 0; i < 20000; i++)
  {
    reals.append(uniform(random));
    // Values near the fourth decimal's halves: the rounding of the last digit.
    reals.append(std::round(uniform(random) * 20000.0) / 20000.0);
    reals.append(std::ldexp(1.0, static_cast<int>(random() % 40) - 30) * static_cast<double>(random() % 1000));
  }
  EXPECT_EQ(JsoncppText(reals), OurText(reals));
}


// The stats answer is written as it is built (JsonWriter's Begin, Key and values, no tree): its
// layout is jsoncpp's, member for member in the order written.
TEST(JsonText, TheStatsAnswerInJsoncppsLayout)
{
  Configuration configuration;
  IngestState pipeline(configuration);
  PluginStatus status;
  StatsQuery query;
  const std::string text = StatsText(pipeline.Collect(query, status), query);
  const Json::Value answer = StatsDocument(pipeline.Collect(query, status), query);
  ASSERT_TRUE(answer.isObject());
  // jsoncpp writes the members of each object in the keys' order: so does JsonWriter given them so.
  EXPECT_EQ(JsoncppText(answer), OurText(answer));
  EXPECT_NE(std::string::npos, text.find("{\n  \"plugin\" : \"ingest-perf\",\n  \"version\" : "));
}


// A document built member by member is the same text as the tree of the same members in the same
// order would be: objects, arrays, empty ones, nested in each other and at the top.
TEST(JsonText, WrittenAsBuiltAsTheTreeIs)
{
  std::mt19937_64 random(7);
  for (int i = 0; i < 300; i++)
  {
    const Json::Value tree = RandomTree(random, 4);
    MappedText text;
    JsonWriter writer(text);
    writer.Tree(tree);  // Begin, Key and the values, member by member
    EXPECT_EQ(0u, writer.OpenContainers());
    ASSERT_EQ(JsoncppText(tree), std::string(text.Data(), text.Size())) << "tree " << i;
  }
  MappedText text;
  JsonWriter writer(text);
  writer.BeginObject();
  writer.Member("b", 1);
  writer.Member("a", 2.5);
  writer.Key("empty");
  writer.BeginObject();
  writer.EndObject();
  writer.Key("list");
  writer.BeginArray();
  writer.BeginArray();
  writer.EndArray();
  writer.Value(std::string("x"));
  writer.Value(nullptr);
  writer.Value(false);
  writer.EndArray();
  writer.EndObject();
  EXPECT_EQ("{\n  \"b\" : 1,\n  \"a\" : 2.5,\n  \"empty\" : {},\n  \"list\" : \n  [\n    [],\n    \"x\",\n    null,\n"
            "    false\n  ]\n}",
            std::string(text.Data(), text.Size()));
}


// A fragment written once is the same text as its tree written in its place, and where it was not
// written for (another depth, an array) the tree is written.
TEST(JsonText, AFragmentIsItsTreeWhereverItGoes)
{
  std::mt19937_64 random(11);
  for (int i = 0; i < 100; i++)
  {
    const Json::Value tree = RandomTree(random, 3);
    const JsonFragment fragment(tree, 1);
    for (int place = 0; place < 3; place++)
    {
      Json::Value document;
      document["before"] = 1;
      document["x"] = tree;
      MappedText text;
      JsonWriter writer(text);
      writer.BeginObject();
      writer.Member("before", 1);
      if (place == 2)
      {
        writer.Key("list");
        writer.BeginArray();
        writer.Fragment(fragment);
        writer.EndArray();
        document.removeMember("x");
        document["list"].append(tree);
      }
      else if (place == 1)
      {
        writer.Key("nested");
        writer.BeginObject();
        writer.Key("x");
        writer.Fragment(fragment);
        writer.EndObject();
        document.removeMember("x");
        document["nested"]["x"] = tree;
      }
      else
      {
        writer.Key("x");
        writer.Fragment(fragment);
      }
      writer.EndObject();
      // jsoncpp sorts "before" ahead of "list", "nested" and "x": the members' written order.
      ASSERT_EQ(JsoncppText(document), std::string(text.Data(), text.Size())) << "tree " << i << " place " << place;
    }
  }
}
