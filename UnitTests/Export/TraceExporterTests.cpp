#include "Export/SlowestExporter.h"
#include "Export/TraceExporter.h"

#include "RecentRings.h"
#include "StatsDocument.h"
#include "TreeReference.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace IngestPerf;

namespace
{
  std::string TraceText(const RecentReport& report, int64_t seconds, bool hashPeers)
  {
    return WrittenText([&](JsonWriter& out) { WriteTrace(out, report, seconds, hashPeers); });
  }

  Json::Value TraceDocument(const RecentReport& report, int64_t seconds, bool hashPeers)
  {
    return StrictlyParsed(TraceText(report, seconds, hashPeers));
  }

  Json::Value SlowestDocument(const RecentReport& report, const RecentQuery& query, bool hashPeers)
  {
    return WrittenDocument([&](JsonWriter& out) { WriteSlowest(out, report, query, hashPeers); });
  }

  constexpr int64_t kMs = 1000000;
  constexpr int64_t kNow = 1000000 * kMs;            // monotonic
  constexpr int64_t kNowWall = 1795000000000 * kMs;  // 2026-11-18

  RecentInstance Instance(LabelCatalog& catalog, Transport transport, const char* aet, int64_t startNs, uint32_t thread,
                          const char* id, int64_t gapNs = -1)
  {
    RawLabels raw;
    raw.remoteAet = aet;
    raw.receivedSyntax = "1.2.840.10008.1.2.1";
    InstanceMeasurement measurement;
    measurement.startNs = startNs;
    const bool http = transport == Transport::Rest;
    const int64_t received = startNs + (http ? 2 * kMs : 0);
    const int64_t filtered = received + 3 * kMs;
    measurement.storedNs = filtered + 4 * kMs;
    if (http)
    {
      measurement.Set(Phase::Receive, startNs, received - startNs);
    }
    measurement.Set(Phase::PreStore, received, filtered - received);
    measurement.Set(Phase::Transcode, received + kMs, kMs);
    measurement.Set(Phase::Persist, filtered, measurement.storedNs - filtered);
    measurement.Set(Phase::StoragePrepare, filtered, kMs);
    measurement.Set(Phase::StorageWrite, filtered + kMs, kMs);
    measurement.Set(Phase::IndexUpdate, filtered + 2 * kMs, 2 * kMs);
    measurement.Set(Phase::ServerTotal, startNs, measurement.storedNs - startNs);
    if (gapNs >= 0)
    {
      measurement.Set(Phase::AssociationGap, received - gapNs, gapNs);
    }
    RecentInstance instance;
    FillRecentInstance(instance, measurement, kNowWall - (kNow - startNs), catalog.Intern(transport, raw, 1000),
                       Outcome::Stored, thread, id);
    return instance;
  }

  RecentReport Report(LabelCatalog& catalog)
  {
    RecentReport report;
    report.collected = true;
    report.nowNs = kNow;
    report.nowWallNs = kNowWall;
    report.catalog = &catalog;
    report.ring.capacity = 16;
    RecentInstanceList& instances = report.ring.instances;
    instances.push_back(Instance(catalog, Transport::Rest, nullptr, kNow - 5000 * kMs, 11, "http-1"));
    instances.push_back(Instance(catalog, Transport::Rest, nullptr, kNow - 5000 * kMs + 9 * kMs, 11, "http-2"));
    // Two associations of CT01 at once, and one of MR01.
    instances.push_back(Instance(catalog, Transport::Dicom, "CT01", kNow - 3000 * kMs, 21, "ct-1"));
    instances.push_back(Instance(catalog, Transport::Dicom, "CT01", kNow - 3000 * kMs + 2 * kMs, 22, "ct-2"));
    instances.push_back(Instance(catalog, Transport::Dicom, "CT01", kNow - 3000 * kMs + 8 * kMs, 21, "ct-3", kMs));
    instances.push_back(Instance(catalog, Transport::Dicom, "MR01", kNow - 2000 * kMs, 23, "mr-1"));
    for (size_t i = 0; i < instances.size(); i++)
    {
      instances[i].sequence = i;
    }
    report.ring.held = instances.size();
    report.ring.pushed = instances.size();
    report.ring.oldestStoredNs = instances[0].measurement.storedNs;
    return report;
  }
}


TEST(TraceExporter, ChromeTraceEventsPerThreadWithNestedPhases)
{
  LabelCatalog catalog(32);
  const RecentReport report = Report(catalog);
  const Json::Value trace = TraceDocument(report, 60, false);
  ASSERT_TRUE(trace["traceEvents"].isArray());
  EXPECT_EQ("ms", trace["displayTimeUnit"].asString());
  EXPECT_EQ(6u, trace["otherData"]["instances"].asUInt());
  EXPECT_EQ(4u, trace["otherData"]["threads"].asUInt());

  std::map<std::pair<int, int64_t>, double> lastTs;
  std::map<std::string, double> instanceDur;
  std::map<std::string, std::string> threadNames;
  size_t counters = 0;
  size_t gaps = 0;
  const Json::Value* enclosing = nullptr;
  for (const Json::Value& event : trace["traceEvents"])
  {
    const std::string ph = event["ph"].asString();
    ASSERT_TRUE(event["pid"].isInt());
    ASSERT_TRUE(event["tid"].isIntegral());
    ASSERT_TRUE(event["name"].isString());
    if (ph == "M")
    {
      if (event["name"].asString() == "thread_name")
      {
        threadNames[std::to_string(event["pid"].asInt()) + "/" + std::to_string(event["tid"].asInt64())] =
          event["args"]["name"].asString();
      }
      continue;
    }
    ASSERT_TRUE(event["ts"].isDouble() || event["ts"].isIntegral());
    EXPECT_GE(event["ts"].asDouble(), 0.0);
    const auto track = std::make_pair(event["pid"].asInt(), event["tid"].asInt64());
    if (lastTs.count(track) != 0)
    {
      EXPECT_LE(lastTs[track], event["ts"].asDouble());
    }
    lastTs[track] = event["ts"].asDouble();
    if (ph == "C")
    {
      counters++;
      EXPECT_TRUE(event["args"]["instancesPerSecond"].isIntegral());
      continue;
    }
    ASSERT_EQ("X", ph);
    ASSERT_TRUE(event["dur"].isNumeric());
    const std::string category = event["cat"].asString();
    if (event["pid"].asInt() == 1 && category == "instance")
    {
      enclosing = &event;
      instanceDur[event["args"]["instanceId"].asString()] = event["dur"].asDouble();
      EXPECT_DOUBLE_EQ(event["dur"].asDouble(), event["args"]["phases"]["serverTotal"].asDouble() * 1000);
    }
    else if (category == "phase")
    {
      ASSERT_NE(nullptr, enclosing);
      EXPECT_EQ((*enclosing)["tid"], event["tid"]);
      EXPECT_GE(event["ts"].asDouble(), (*enclosing)["ts"].asDouble());
      EXPECT_LE(event["ts"].asDouble() + event["dur"].asDouble(),
                (*enclosing)["ts"].asDouble() + (*enclosing)["dur"].asDouble() + 1e-6);
      EXPECT_DOUBLE_EQ(event["dur"].asDouble(),
                       (*enclosing)["args"]["phases"][event["name"].asString()].asDouble() * 1000);
    }
    else if (category == "associationGap")
    {
      gaps++;
      EXPECT_EQ(2, event["pid"].asInt());
      EXPECT_DOUBLE_EQ(1000.0, event["dur"].asDouble());
    }
  }
  EXPECT_EQ(60u, counters);
  EXPECT_EQ(1u, gaps);
  EXPECT_EQ(6u, instanceDur.size());
  EXPECT_EQ("thread 11", threadNames["1/11"]);
  // CT01's two overlapping associations on two tracks, MR01 on a third.
  EXPECT_EQ("C-STORE from CT01 #1", threadNames["2/1"]);
  EXPECT_EQ("C-STORE from CT01 #2", threadNames["2/2"]);
  EXPECT_EQ("C-STORE from MR01 #1", threadNames["2/3"]);
}


TEST(TraceExporter, PeersHashedAndEmptyRing)
{
  LabelCatalog catalog(32);
  const Json::Value trace = TraceDocument(Report(catalog), 10, true);
  bool sawPseudonym = false;
  for (const Json::Value& event : trace["traceEvents"])
  {
    EXPECT_EQ(std::string::npos, event.toStyledString().find("CT01"));
    sawPseudonym = sawPseudonym || event["args"]["name"].asString().find("aet-") != std::string::npos;
  }
  EXPECT_TRUE(sawPseudonym);

  RecentReport empty;
  empty.nowNs = kNow;
  const Json::Value nothing = TraceDocument(empty, 5, false);
  EXPECT_EQ(0u, nothing["otherData"]["instances"].asUInt());
  EXPECT_EQ(2u + 5u, nothing["traceEvents"].size());  // two process names, five counter samples
}


TEST(SlowestExporter, WholeTimelineLabelsAndReach)
{
  LabelCatalog catalog(32);
  const RecentReport report = Report(catalog);
  RecentQuery query;
  const Json::Value answer = SlowestDocument(report, query, false);
  EXPECT_EQ("serverTotal", answer["phase"].asString());
  EXPECT_EQ(6u, answer["instances"].size());
  const Json::Value& first = answer["instances"][0];
  EXPECT_EQ("http-1", first["instanceId"].asString());
  EXPECT_EQ("rest", first["transport"].asString());
  EXPECT_EQ(11u, first["thread"].asUInt());
  EXPECT_DOUBLE_EQ(9.0, first["phases"]["serverTotal"].asDouble());
  EXPECT_DOUBLE_EQ(2.0, first["phases"]["receive"].asDouble());
  EXPECT_FALSE(first["phases"].isMember("associationGap"));
  EXPECT_EQ("(none)", first["labels"]["remoteAet"].asString());
  EXPECT_EQ(std::string::npos, first["arrival"].asString().find(' '));
  EXPECT_EQ('Z', first["arrival"].asString().back());
  EXPECT_EQ(16u, answer["ring"]["capacity"].asUInt());
  EXPECT_TRUE(answer["ring"]["coversWindow"].asBool());  // nothing overwritten
  RecentReport wrapped = report;
  wrapped.ring.pushed = 1000;
  EXPECT_FALSE(SlowestDocument(wrapped, query, false)["ring"]["coversWindow"].asBool());  // reaches back 5 s of 300
  query.windowSeconds = 4;
  EXPECT_TRUE(SlowestDocument(wrapped, query, false)["ring"]["coversWindow"].asBool());
  EXPECT_NEAR(5000.0 - 9.0, answer["ring"]["reachesBackSeconds"].asDouble() * 1000, 0.01);
  EXPECT_EQ("aet-",
            SlowestDocument(report, query, true)["instances"][2]["labels"]["remoteAet"].asString().substr(0, 4));
}


namespace
{
  // The answer as the route wrote it before: the tree, written whole by WriteJsonText.
  std::string TreeTraceText(const RecentReport& report, int64_t seconds, bool hashPeers)
  {
    return WrittenText([&](JsonWriter& out) { out.Tree(TreeReference::ExportTrace(report, seconds, hashPeers)); });
  }

  // The text parses, strictly, to the same document as the tree-built answer's, member for member
  // and value for value (the same types, the same 4 decimals); the same length too, since only the
  // order of the members differs.
  void ExpectTheTreeBuiltTrace(const RecentReport& report, int64_t seconds, bool hashPeers)
  {
    SCOPED_TRACE("seconds=" + std::to_string(seconds) + " hashPeers=" + std::to_string(hashPeers));
    const std::string text = TraceText(report, seconds, hashPeers);
    const std::string tree = TreeTraceText(report, seconds, hashPeers);
    EXPECT_EQ(tree.size(), text.size());
    const Json::Value document = StrictlyParsed(text);
    EXPECT_EQ("", FirstDifference(StrictlyParsed(tree), document));
    EXPECT_EQ(report.ring.instances.size(), document["otherData"]["instances"].asUInt64());
  }

  void ExpectTheTreeBuiltTraces(const RecentReport& report)
  {
    for (const bool hashPeers : {false, true})
    {
      for (const int64_t seconds : {int64_t(1), int64_t(60)})
      {
        ExpectTheTreeBuiltTrace(report, seconds, hashPeers);
      }
    }
  }
}


TEST(TraceExporter, TheTreeBuiltAnswerForTheEdgeCases)
{
  {
    SCOPED_TRACE("no catalog, no instance (the plugin not running)");
    RecentReport empty;
    empty.nowNs = kNow;
    ExpectTheTreeBuiltTraces(empty);
  }
  {
    SCOPED_TRACE("an empty ring");
    RecentRing ring(1);
    ExpectTheTreeBuiltTraces(ring.report);
  }
  {
    SCOPED_TRACE("one instance");
    RecentRing ring(2);
    ring.AddRandom(1, 60, 1, false);
    ExpectTheTreeBuiltTraces(ring.report);
  }
  {
    SCOPED_TRACE("one instance of each transport, with odd labels");
    RecentRing ring(3);
    for (size_t t = 0; t < kTransportCount; t++)
    {
      RecentInstance instance = ring.RandomInstance(10, 2, true);
      RawLabels raw;
      raw.remoteAet = "\"\\\x01\xff\xc3\xa9\xf0\x9f\x98\x80";
      raw.calledAet = "\xed\xa0\x80\t";
      raw.remoteIp = "\n";
      instance.labels = ring.Catalog().Intern(static_cast<Transport>(t), raw, 1000);
      ring.Add(instance);
    }
    ExpectTheTreeBuiltTraces(ring.report);
    // The value as Labels/LabelExposure escaped it, whole through JSON's own escapes.
    const Json::Value trace = TraceDocument(ring.report, 60, false);
    size_t seen = 0;
    for (const Json::Value& event : trace["traceEvents"])
    {
      if (event["cat"] == "instance" && event["pid"] == 1)
      {
        EXPECT_EQ("\"\\x5C\\x01\\xFF\\xC3\\xA9\\xF0\\x9F\\x98\\x80", event["args"]["labels"]["remoteAet"].asString());
        seen++;
      }
    }
    EXPECT_EQ(kTransportCount, seen);
  }
  {
    SCOPED_TRACE("instances but no catalog");
    RecentRing ring(4);
    ring.AddRandom(20, 60, 3, false);
    ring.report.catalog = nullptr;
    ExpectTheTreeBuiltTraces(ring.report);
  }
  {
    SCOPED_TRACE("label dictionaries overflowing");
    RecentRing ring(5, 2);
    ring.AddRandom(100, 60, 4, true);
    ExpectTheTreeBuiltTraces(ring.report);
  }
  {
    SCOPED_TRACE("the fixed report of the tests above, over the longest window too");
    LabelCatalog catalog(32);
    ExpectTheTreeBuiltTraces(Report(catalog));
    ExpectTheTreeBuiltTrace(Report(catalog), kMaxTraceSeconds, true);
  }
}


// A full ring of 4,096 instances from 16 threads over an hour, with odd labels and peers hashed:
// the size of the largest answers.
TEST(TraceExporter, TheTreeBuiltAnswerForAFullRing)
{
  RecentRing ring(6);
  ring.AddRandom(4096, 3600, 16, true);
  ExpectTheTreeBuiltTrace(ring.report, kMaxTraceSeconds, true);
}


TEST(TraceExporter, TheTreeBuiltAnswerForRandomRings)
{
  for (uint32_t seed = 100; seed < 124; seed++)
  {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RecentRing ring(seed, seed % 3 == 0 ? 3 : 64);
    ring.AddRandom(ring.Below(120), 1 + static_cast<int64_t>(ring.Below(120)), 1 + static_cast<uint32_t>(ring.Below(8)),
                   seed % 2 == 0);
    ring.report.ring.skipped = ring.Below(3);
    ring.report.ring.pushed += ring.Below(2) * 5000;
    if (ring.Chance(0.2))
    {
      ring.report.ring.oldestStoredNs = 0;
    }
    // Windows shorter and longer than the instances' span (those before the window make the origin
    // earlier).
    const int64_t seconds = 1 + static_cast<int64_t>(ring.Below(ring.Chance(0.2) ? kMaxTraceSeconds : 180));
    ExpectTheTreeBuiltTrace(ring.report, seconds, ring.Chance(0.5));
  }
}


// The order the members are written in (docs/rest-api.md): the summary before the events, each
// event's name, cat, ph, ts, dur, pid, tid, args.
TEST(TraceExporter, MembersInTheWrittenOrder)
{
  LabelCatalog catalog(32);
  const std::string text = TraceText(Report(catalog), 60, false);
  const auto at = [&text](const char* member) { return text.find(member); };
  EXPECT_EQ(0u, text.find("{\n  \"displayTimeUnit\" : \"ms\",\n  \"otherData\" : \n  {\n    \"origin\" : "));
  EXPECT_LT(at("\"origin\""), at("\"seconds\""));
  EXPECT_LT(at("\"seconds\""), at("\"instances\""));
  EXPECT_LT(at("\"instances\""), at("\"threads\""));
  EXPECT_LT(at("\"threads\""), at("\"ring\""));
  EXPECT_LT(at("\"ring\""), at("\"traceEvents\""));
  const size_t slice = text.find("\"name\" : \"rest instance\"");
  ASSERT_NE(std::string::npos, slice);
  size_t last = slice;
  for (const char* member :
       {"\"cat\"", "\"ph\"", "\"ts\"", "\"dur\"", "\"pid\"", "\"tid\"", "\"args\"", "\"instanceId\"", "\"arrival\"",
        "\"thread\"", "\"transport\"", "\"outcome\"", "\"storedBytes\"", "\"phases\"", "\"parts\"", "\"labels\""})
  {
    const size_t next = text.find(member, last);
    EXPECT_LT(last, next) << member;
    last = next;
  }
}
