#include "Labels/InstanceLabels.h"
#include "Metrics/StreamTable.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

TEST(StreamTable, FindsOrClaimsAndOverflowsPerTransport)
{
  StreamTable table(4);
  std::vector<InstanceLabels> labels(6);
  for (size_t i = 0; i < labels.size(); i++)
  {
    labels[i].SetTransport(i % 2 ? Transport::Rest : Transport::Dicom);
    labels[i].Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + i));
  }
  for (const InstanceLabels& l : labels)
  {
    table.FindOrInsert(l).RecordOutcome(Outcome::Stored);
  }
  table.FindOrInsert(labels[0]).RecordOutcome(Outcome::Stored);
  EXPECT_EQ(4u, table.Used());
  EXPECT_EQ(2u, table.Overflowed());

  uint64_t total = 0;
  size_t overflowSeries = 0;
  table.ForEach([&](const InstanceLabels& l, const StreamStats& stats) {
    total += stats.outcomes[static_cast<size_t>(Outcome::Stored)].load();
    if (l.Get(LabelDimension::RemoteAet) == kOtherLabel)
    {
      overflowSeries++;
    }
  });
  EXPECT_EQ(7u, total);  // nothing lost: the overflow series hold the rest
  EXPECT_GE(overflowSeries, 1u);

  table.ResetAll();
  size_t visible = 0;
  table.ForEach([&](const InstanceLabels&, const StreamStats&) { visible++; });
  EXPECT_EQ(0u, visible);
  EXPECT_EQ(0u, table.Used());  // the reset frees the label combinations' slots
  EXPECT_EQ(0u, table.Overflowed());
  // A combination that overflowed before the reset has a stream of its own after it.
  InstanceLabels late;
  late.SetTransport(Transport::Rest);
  late.Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + 200));
  table.FindOrInsert(late).RecordOutcome(Outcome::Stored);
  EXPECT_EQ(1u, table.Used());
  EXPECT_EQ(0u, table.Overflowed());
}


TEST(StreamTable, FullTableSendsNewKeysToOverflowAndCountsEachInstance)
{
  StreamTable table(200);  // larger than the probe limit
  std::vector<InstanceLabels> labels(1000);
  for (size_t i = 0; i < labels.size(); i++)
  {
    labels[i].SetTransport(Transport::Rest);
    labels[i].Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + i % 250));
    labels[i].Set(LabelDimension::RemoteIp, static_cast<LabelId>(kFirstValueLabel + i / 250));
  }
  for (const InstanceLabels& l : labels)
  {
    table.FindOrInsert(l).RecordOutcome(Outcome::Stored);
  }
  EXPECT_LE(table.Used(), 200u);
  EXPECT_GT(table.Used(), 180u);
  EXPECT_EQ(1000u - table.Used(), table.Overflowed());
  uint64_t total = 0;
  table.ForEach([&](const InstanceLabels&, const StreamStats& stats) {
    total += stats.outcomes[static_cast<size_t>(Outcome::Stored)].load();
  });
  EXPECT_EQ(1000u, total);
}


TEST(StreamTable, RepeatedOverflowingKeyIsCountedPerInstance)
{
  StreamTable table(2);
  InstanceLabels labels[3];
  for (int i = 0; i < 3; i++)
  {
    labels[i].SetTransport(Transport::Dicom);
    labels[i].Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + i));
    table.FindOrInsert(labels[i]);
  }
  EXPECT_EQ(1u, table.Overflowed());
  StreamStats& overflow = table.FindOrInsert(labels[2]);  // the thread's cached overflow
  EXPECT_EQ(&overflow, &table.FindOrInsert(labels[2]));
  EXPECT_EQ(3u, table.Overflowed());
  EXPECT_NE(&overflow, &table.FindOrInsert(labels[0]));
  EXPECT_EQ(3u, table.Overflowed());
}


TEST(StreamTable, ConcurrentClaimsGiveOneSeriesPerKey)
{
  StreamTable table(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++)
  {
    threads.emplace_back([&table] {
      for (int round = 0; round < 1000; round++)
      {
        InstanceLabels labels;
        labels.SetTransport(Transport::Rest);
        labels.Set(LabelDimension::SopClass, static_cast<LabelId>(kFirstValueLabel + round % 32));
        table.FindOrInsert(labels).RecordOutcome(Outcome::Stored);
      }
    });
  }
  for (std::thread& thread : threads)
  {
    thread.join();
  }
  EXPECT_EQ(32u, table.Used());
  uint64_t total = 0;
  table.ForEach([&](const InstanceLabels&, const StreamStats& stats) {
    total += stats.outcomes[static_cast<size_t>(Outcome::Stored)].load();
  });
  EXPECT_EQ(8000u, total);
}


// A NewInstance change can pair with an instance stored before a reset, after that reset: its
// series then holds a changeDispatch sample (or a ChangesBeforeStored count) and no outcome yet.
// Such a series must be visible to readers and zeroed by the next reset, like any other.
TEST(StreamTable, SeriesWithoutOutcomeIsReadAndReset)
{
  StreamTable table(4);
  InstanceLabels labels;
  labels.SetTransport(Transport::Rest);
  table.FindOrInsert(labels).RecordOutcome(Outcome::Stored);
  table.ResetAll();
  table.FindOrInsert(labels).RecordPhase(Phase::ChangeDispatch, 1000);  // the change of the instance stored before
  table.FindOrInsert(labels).Count(Counter::ChangesBeforeStored);

  size_t visited = 0;
  table.ForEach([&](const InstanceLabels&, const StreamStats& stats) {
    visited++;
    EXPECT_EQ(1u, stats.phases[static_cast<size_t>(Phase::ChangeDispatch)].Count());
  });
  EXPECT_EQ(1u, visited);  // read, not skipped as empty

  table.ResetAll();
  table.FindOrInsert(labels).RecordOutcome(Outcome::Stored);
  table.ForEach([&](const InstanceLabels&, const StreamStats& stats) {
    EXPECT_EQ(0u, stats.phases[static_cast<size_t>(Phase::ChangeDispatch)].Count());  // zeroed by the reset
    EXPECT_EQ(0u, stats.counters[static_cast<size_t>(Counter::ChangesBeforeStored)].load());
  });
}

namespace
{
  // Three calling AETs over C-STORE, with 1, 2 and 3 instances stored in 1, 2 and 3 ms.
  std::vector<InstanceLabels> ThreeSendersStored(StreamTable& table)
  {
    std::vector<InstanceLabels> labels(3);
    for (size_t i = 0; i < labels.size(); i++)
    {
      labels[i].SetTransport(Transport::Dicom);
      labels[i].Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + i));
      for (size_t n = 0; n <= i; n++)
      {
        InstanceMeasurement measurement;
        measurement.hasTimeline = true;
        measurement.Set(Phase::ServerTotal, 1000000 * int64_t(1 + i));
        table.FindOrInsert(labels[i]).RecordStored(measurement);
      }
    }
    return labels;
  }
}

TEST(StreamTable, LabelsThatAgeOutAreFoldedIntoTheOverflowStreamWithExactSums)
{
  StreamTable table(8);
  const std::vector<InstanceLabels> labels = ThreeSendersStored(table);
  EXPECT_EQ(3u, table.Folded() + table.Used());
  EXPECT_EQ(3u, table.FoldIntoOverflow());
  EXPECT_EQ(0u, table.Used());
  EXPECT_EQ(3u, table.Folded());
  size_t streams = 0;
  table.ForEach([&](const InstanceLabels& l, const StreamStats& stats) {
    streams++;
    EXPECT_EQ(kOtherLabel, l.Get(LabelDimension::RemoteAet));
    EXPECT_EQ(Transport::Dicom, l.GetTransport());
    EXPECT_EQ(6u, stats.outcomes[static_cast<size_t>(Outcome::Stored)].load());
    const HistogramSnapshot total = stats.phases[static_cast<size_t>(Phase::ServerTotal)].Snapshot();
    EXPECT_EQ(6u, total.Count());
    EXPECT_EQ(uint64_t(1 + 2 * 2 + 3 * 3) * 1000000, total.Sum());
    EXPECT_EQ(1000000, total.Min());
    EXPECT_EQ(3000000, total.Max());
  });
  EXPECT_EQ(1u, streams);  // one "(other)" stream: the folded ones freed their slots
  // The labels "(other)" of an instance that aged out are that same stream, never a second one.
  InstanceLabels agedOut;
  agedOut.ids.fill(kOtherLabel);
  agedOut.SetTransport(Transport::Dicom);
  table.FindOrInsert(agedOut).RecordOutcome(Outcome::Failed);
  EXPECT_EQ(0u, table.Used());
  table.FindOrInsert(labels[0]).RecordOutcome(Outcome::Stored);  // a new value: a slot of its own again
  EXPECT_EQ(1u, table.Used());
}

TEST(StreamTable, TheStreamsOfKeptLabelsGoOnWhenTheOthersAreFolded)
{
  StreamTable table(8);
  const std::vector<InstanceLabels> labels = ThreeSendersStored(table);
  const LabelId kept = static_cast<LabelId>(kFirstValueLabel + 2);
  EXPECT_EQ(
    2u, table.FoldIntoOverflow([kept](const InstanceLabels& l) { return l.Get(LabelDimension::RemoteAet) == kept; }));
  EXPECT_EQ(1u, table.Used());
  table.FindOrInsert(labels[2]).RecordOutcome(Outcome::Stored);  // the same stream, its sums going on
  std::map<LabelId, uint64_t> stored;
  table.ForEach([&](const InstanceLabels& l, const StreamStats& stats) {
    stored[l.Get(LabelDimension::RemoteAet)] = stats.outcomes[static_cast<size_t>(Outcome::Stored)].load();
  });
  EXPECT_EQ((std::map<LabelId, uint64_t>{{kOtherLabel, 3}, {kept, 4}}), stored);
}
