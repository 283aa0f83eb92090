#include "Export/SlotsExporter.h"

#include "RecentRings.h"
#include "StatsDocument.h"
#include "TreeReference.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

using namespace IngestPerf;

namespace
{
  Json::Value SlotsDocument(const SlotsReport& report, const StatsQuery& query)
  {
    return WrittenDocument([&](JsonWriter& out) { WriteSlots(out, report, query); });
  }

  constexpr int64_t kSecond = 1000000000;

  InstanceMeasurement Measurement(int64_t serverTotalNs, int64_t gapNs, uint64_t bytes)
  {
    InstanceMeasurement measurement;
    measurement.hasTimeline = true;
    measurement.storedBytes = bytes;
    measurement.Set(Phase::ServerTotal, serverTotalNs);
    measurement.Set(Phase::AssociationGap, gapNs);
    return measurement;
  }
}


TEST(SlotsExporter, EachSlotOnUtcWithItsFigures)
{
  TimeWindows windows(0);
  windows.RecordStored(Transport::Dicom, 1001 * kSecond, Measurement(4000000, 44000000, 1000));
  windows.RecordStored(Transport::Dicom, 1002 * kSecond, Measurement(6000000, 46000000, 3000));
  windows.RecordStored(Transport::Rest, 1012 * kSecond, Measurement(2000000, InstanceMeasurement::kNotMeasured, 500));

  SlotsReport report;
  report.collected = true;
  report.windowsKept = true;
  report.nowNs = 1015 * kSecond;
  report.nowWallNs = int64_t(1795000000) * kSecond;  // 2026-11-18T11:06:40Z
  report.window = windows.Slots(Window::OneMinute, report.nowNs);

  StatsQuery query;
  query.hasWindow = true;
  query.window = Window::OneMinute;
  const Json::Value answer = SlotsDocument(report, query);
  EXPECT_EQ("1m", answer["window"].asString());
  EXPECT_EQ(10.0, answer["slotSeconds"].asDouble());
  EXPECT_EQ(6, answer["fullSlots"].asInt());
  EXPECT_EQ(65.0, answer["seconds"].asDouble());  // 950 s to 1015 s
  EXPECT_EQ("2026-11-18T11:06:40.000Z", answer["now"].asString());
  EXPECT_EQ("milliseconds", answer["units"]["durations"].asString());

  const Json::Value& transports = answer["transports"];
  EXPECT_EQ((std::vector<std::string>{"all", "dicom", "job", "plugin", "rest"}), transports.getMemberNames());
  const Json::Value& dicom = transports["dicom"];
  ASSERT_EQ(7u, dicom.size());
  EXPECT_EQ("2026-11-18T11:05:35.000Z", dicom[0]["start"].asString());  // 950 s: 65 s before now
  EXPECT_EQ("2026-11-18T11:06:35.000Z", dicom[6]["start"].asString());
  EXPECT_EQ(5.0, dicom[6]["seconds"].asDouble());
  const Json::Value& slot = dicom[5];  // [1000, 1010)
  EXPECT_EQ(10.0, slot["seconds"].asDouble());
  EXPECT_EQ(2u, slot["stored"].asUInt64());
  EXPECT_EQ(4000u, slot["bytes"].asUInt64());
  EXPECT_EQ((std::vector<std::string>{"associationGap", "serverTotal"}), slot["phases"].getMemberNames());
  const Json::Value& total = slot["phases"]["serverTotal"];
  EXPECT_EQ(2u, total["count"].asUInt64());
  EXPECT_EQ(5.0, total["mean"].asDouble());  // exact: the sum is kept
  EXPECT_NEAR(4.0, total["p50"].asDouble(), 4.0 / 8);
  EXPECT_NEAR(6.0, total["p99"].asDouble(), 6.0 / 8);
  EXPECT_EQ(0u, dicom[4]["stored"].asUInt64());
  EXPECT_TRUE(dicom[4]["phases"].isObject() && dicom[4]["phases"].empty());

  // "all" is the merge of the transports, slot by slot.
  EXPECT_EQ(2u, transports["all"][5]["stored"].asUInt64());
  EXPECT_EQ(1u, transports["all"][6]["stored"].asUInt64());
  EXPECT_EQ(1u, transports["rest"][6]["phases"]["serverTotal"]["count"].asUInt64());

  // One transport, or their merge only.
  query.scope = StatsQuery::Scope::Single;
  query.transport = Transport::Rest;
  EXPECT_EQ((std::vector<std::string>{"rest"}), SlotsDocument(report, query)["transports"].getMemberNames());
  query.scope = StatsQuery::Scope::MergedOnly;
  EXPECT_EQ((std::vector<std::string>{"all"}), SlotsDocument(report, query)["transports"].getMemberNames());
}


namespace
{
  // Every query of a window: each transport then "all", one transport, "all" only.
  std::vector<StatsQuery> EveryListing(Window window)
  {
    std::vector<StatsQuery> queries;
    StatsQuery query;
    query.hasWindow = true;
    query.window = window;
    queries.push_back(query);
    query.scope = StatsQuery::Scope::MergedOnly;
    queries.push_back(query);
    query.scope = StatsQuery::Scope::Single;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      query.transport = static_cast<Transport>(t);
      queries.push_back(query);
    }
    return queries;
  }

  // The text parses, strictly, to the document the tree-built answer was, and has its length.
  // Returns the text's size.
  size_t ExpectTheTreeBuiltSlots(const SlotsReport& report, const StatsQuery& query)
  {
    SCOPED_TRACE("window " + std::string(WindowName(query.window)) + ", scope " +
                 std::to_string(static_cast<int>(query.scope)) + ", transport " + TransportName(query.transport));
    const std::string text = WrittenText([&](JsonWriter& out) { WriteSlots(out, report, query); });
    const std::string tree = WrittenText([&](JsonWriter& out) { out.Tree(TreeReference::ExportSlots(report, query)); });
    EXPECT_EQ(tree.size(), text.size());
    EXPECT_EQ("", FirstDifference(StrictlyParsed(tree), StrictlyParsed(text)));
    return text.size();
  }

  // An hour of stored instances on every transport, every phase measured (and split on some),
  // from `startNs` to `endNs`, one every `everyNs`.
  void RecordEverywhere(TimeWindows& windows, std::mt19937_64& random, int64_t startNs, int64_t endNs, int64_t everyNs,
                        double measuredChance)
  {
    std::bernoulli_distribution measured(measuredChance);
    std::uniform_int_distribution<int64_t> duration(1, 2000000000);
    size_t n = 0;
    for (int64_t at = startNs; at < endNs; at += everyNs, n++)
    {
      InstanceMeasurement measurement;
      measurement.hasTimeline = true;
      measurement.storedBytes = static_cast<uint64_t>(duration(random));
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        if (measured(random))
        {
          measurement.Set(static_cast<Phase>(p), duration(random));
        }
      }
      windows.RecordStored(static_cast<Transport>(n % kTransportCount), at, measurement);
      if (measured(random))
      {
        windows.RecordPhase(static_cast<Transport>((n / 2) % kTransportCount), at, Phase::ChangeDispatch,
                            duration(random));
      }
    }
  }
}


TEST(SlotsExporter, TheTreeBuiltAnswerForEveryWindowAndListing)
{
  {
    SCOPED_TRACE("not collected: no slot");
    SlotsReport empty;
    for (const StatsQuery& query : EveryListing(Window::OneHour))
    {
      ExpectTheTreeBuiltSlots(empty, query);
    }
  }
  for (uint32_t seed = 1; seed <= 4; seed++)
  {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 random(seed);
    const int64_t startNs = 100 * kSecond;
    TimeWindows windows(startNs);
    const int64_t nowNs = startNs + static_cast<int64_t>(random() % (2 * 3600)) * kSecond + 1234567;
    RecordEverywhere(windows, random, startNs + kSecond, nowNs, (1 + static_cast<int64_t>(random() % 30)) * kSecond,
                     0.15 * static_cast<double>(seed));
    SlotsReport report;
    report.collected = true;
    report.windowsKept = true;
    report.nowNs = nowNs;
    report.nowWallNs = int64_t(1795000000) * kSecond + static_cast<int64_t>(random() % kSecond);
    for (size_t w = 0; w < kWindowCount; w++)
    {
      report.window = windows.Slots(static_cast<Window>(w), report.nowNs);
      for (const StatsQuery& query : EveryListing(static_cast<Window>(w)))
      {
        ExpectTheTreeBuiltSlots(report, query);
      }
    }
  }
}


// An hour with every table full: each of the 61 slots of every transport with a sample of every
// phase. About 0.6 MB of text and 19,000 values, which as a tree were as many malloc'd nodes: as
// large as /perf/slowest?n=1000, so written the same way.
TEST(SlotsExporter, AFullHourIsALargeAnswer)
{
  std::mt19937_64 random(7);
  const int64_t startNs = 100 * kSecond;
  TimeWindows windows(startNs);
  const int64_t nowNs = startNs + 3700 * kSecond;
  RecordEverywhere(windows, random, startNs, nowNs, kSecond / 8, 1.0);
  SlotsReport report;
  report.collected = true;
  report.windowsKept = true;
  report.nowNs = nowNs;
  report.nowWallNs = int64_t(1795000000) * kSecond;
  report.window = windows.Slots(Window::OneHour, report.nowNs);
  StatsQuery query;
  query.hasWindow = true;
  query.window = Window::OneHour;
  const size_t size = ExpectTheTreeBuiltSlots(report, query);
  const Json::Value document = SlotsDocument(report, query);
  ASSERT_EQ(61u, document["transports"]["all"].size());
  EXPECT_EQ(kPhaseCount, document["transports"]["all"][30]["phases"].size());
  RecordProperty("answerBytes", std::to_string(size));
  std::printf("GET /perf/slots?window=1h, every table full: %zu bytes\n", size);
  EXPECT_GT(size, 500000u);
}
