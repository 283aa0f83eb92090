#include "Export/SlotsExporter.h"

#include <gtest/gtest.h>

using namespace IngestPerf;

namespace
{
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
  const Json::Value answer = ExportSlots(report, query);
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
  EXPECT_EQ((std::vector<std::string>{"rest"}), ExportSlots(report, query)["transports"].getMemberNames());
  query.scope = StatsQuery::Scope::MergedOnly;
  EXPECT_EQ((std::vector<std::string>{"all"}), ExportSlots(report, query)["transports"].getMemberNames());
}
