#include "Export/SlowestExporter.h"
#include "Export/TraceExporter.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

using namespace IngestPerf;

namespace
{
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
  const Json::Value trace = ExportTrace(report, 60, false);
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
  const Json::Value trace = ExportTrace(Report(catalog), 10, true);
  bool sawPseudonym = false;
  for (const Json::Value& event : trace["traceEvents"])
  {
    EXPECT_EQ(std::string::npos, event.toStyledString().find("CT01"));
    sawPseudonym = sawPseudonym || event["args"]["name"].asString().find("aet-") != std::string::npos;
  }
  EXPECT_TRUE(sawPseudonym);

  RecentReport empty;
  empty.nowNs = kNow;
  const Json::Value nothing = ExportTrace(empty, 5, false);
  EXPECT_EQ(0u, nothing["otherData"]["instances"].asUInt());
  EXPECT_EQ(2u + 5u, nothing["traceEvents"].size());  // two process names, five counter samples
}


TEST(SlowestExporter, WholeTimelineLabelsAndReach)
{
  LabelCatalog catalog(32);
  const RecentReport report = Report(catalog);
  RecentQuery query;
  const Json::Value answer = ExportSlowest(report, query, false);
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
  EXPECT_FALSE(ExportSlowest(wrapped, query, false)["ring"]["coversWindow"].asBool());  // reaches back 5 s of 300
  query.windowSeconds = 4;
  EXPECT_TRUE(ExportSlowest(wrapped, query, false)["ring"]["coversWindow"].asBool());
  EXPECT_NEAR(5000.0 - 9.0, answer["ring"]["reachesBackSeconds"].asDouble() * 1000, 0.01);
  EXPECT_EQ("aet-", ExportSlowest(report, query, true)["instances"][2]["labels"]["remoteAet"].asString().substr(0, 4));
}
