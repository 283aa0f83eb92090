#include "Metrics/IngestStats.h"

#include "Labels/LabelCatalog.h"

#include <gtest/gtest.h>

#include <string>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;

  struct Fed
  {
    LabelCatalog catalog{8};
    IngestStats stats{0, 0, 64};

    InstanceLabels Labels(Transport transport, const std::string& aet)
    {
      RawLabels raw;
      raw.remoteAet = aet.c_str();
      raw.storedSyntax = "1.2.840.10008.1.2.1";
      return catalog.Intern(transport, raw, 1000);
    }

    // One stored instance whose storageWrite took `ms`, split into parts when `split`.
    void Stored(Transport transport, const std::string& aet, int64_t ms, bool split = false)
    {
      InstanceMeasurement m;
      m.hasTimeline = true;
      m.startNs = 1 * kMs;
      m.storedNs = 2 * kMs + ms * kMs;
      m.storedBytes = 1000;
      m.receivedBytes = 900;
      m.Set(Phase::StorageWrite, ms * kMs);
      if (split)
      {
        m.SetParts(Phase::StorageWrite, ms * kMs / 2, ms * kMs / 4);
      }
      stats.RecordStored(m, Labels(transport, aet));
    }
  };

  // What a reader sees of the streams merged per transport.
  void ExpectSame(const StatsSnapshot& a, const StatsSnapshot& b)
  {
    for (size_t t = 0; t < kTransportCount; t++)
    {
      const TransportSnapshot& x = a.transports[t];
      const TransportSnapshot& y = b.transports[t];
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        EXPECT_TRUE(x.phases[p] == y.phases[p]) << "transport " << t << " phase " << p;
        EXPECT_EQ(x.PartsOf(static_cast<Phase>(p)).sampled, y.PartsOf(static_cast<Phase>(p)).sampled);
        EXPECT_EQ(x.PartsOf(static_cast<Phase>(p)).durationNs, y.PartsOf(static_cast<Phase>(p)).durationNs);
        EXPECT_EQ(x.PartsOf(static_cast<Phase>(p)).cpuNs, y.PartsOf(static_cast<Phase>(p)).cpuNs);
      }
      EXPECT_TRUE(x.receivedBytes == y.receivedBytes);
      EXPECT_TRUE(x.storedBytes == y.storedBytes);
      EXPECT_EQ(x.outcomes, y.outcomes);
      EXPECT_EQ(x.counters, y.counters);
      EXPECT_EQ(x.firstStartNs, y.firstStartNs);
      EXPECT_EQ(x.lastStoredNs, y.lastStoredNs);
    }
  }

  uint64_t StorageWrites(const StatsSnapshot& snapshot, Transport transport)
  {
    return snapshot.transports[static_cast<size_t>(transport)].phases[static_cast<size_t>(Phase::StorageWrite)].Count();
  }
}


// Each reading merges the streams again (nothing is kept from one answer to the next since issue
// 35): two readings of the same streams are the same, and every kind of record is in the next one.
TEST(IngestStats, EachReadingMergesTheStreamsAndSeesEveryKindOfRecord)
{
  Fed fed;
  for (int i = 0; i < 40; i++)
  {
    fed.Stored(i % 2 == 0 ? Transport::Dicom : Transport::Rest, "AET" + std::to_string(i % 7), 1 + i, i % 3 == 0);
  }
  const StatsSnapshot first = fed.stats.Snapshot(100 * kMs);
  const StatsSnapshot second = fed.stats.Snapshot(200 * kMs);
  ExpectSame(first, second);
  EXPECT_EQ(20u, StorageWrites(second, Transport::Dicom));

  // A stored instance, in a stream seen before and in a new one.
  fed.Stored(Transport::Dicom, "AET1", 500);
  EXPECT_EQ(21u, StorageWrites(fed.stats.Snapshot(300 * kMs), Transport::Dicom));
  fed.Stored(Transport::Dicom, "NEWAET", 600);
  const StatsSnapshot withNew = fed.stats.Snapshot(300 * kMs);
  EXPECT_EQ(22u, StorageWrites(withNew, Transport::Dicom));
  EXPECT_EQ(
    600 * kMs,
    withNew.transports[static_cast<size_t>(Transport::Dicom)].phases[static_cast<size_t>(Phase::StorageWrite)].Max());

  // An outcome, a counter, a phase sample outside an instance's record.
  const InstanceLabels labels = fed.Labels(Transport::Rest, "AET2");
  fed.stats.RecordOutcome(Outcome::Failed, labels, 0);
  EXPECT_EQ(1u, fed.stats.Snapshot(400 * kMs)
                  .transports[static_cast<size_t>(Transport::Rest)]
                  .outcomes[static_cast<size_t>(Outcome::Failed)]);
  fed.stats.Count(Counter::TranscodeAttempts, labels, 0);
  EXPECT_EQ(1u, fed.stats.Snapshot(400 * kMs).transports[static_cast<size_t>(Transport::Rest)].Count(
                  Counter::TranscodeAttempts));
  fed.stats.RecordPhase(Phase::ChangeDispatch, labels, 3 * kMs, 0);
  EXPECT_EQ(1u, fed.stats.Snapshot(400 * kMs)
                  .transports[static_cast<size_t>(Transport::Rest)]
                  .phases[static_cast<size_t>(Phase::ChangeDispatch)]
                  .Count());

  // A phase split into parts.
  const uint64_t sampled =
    fed.stats.Snapshot(400 * kMs).transports[static_cast<size_t>(Transport::Rest)].PartsOf(Phase::StorageWrite).sampled;
  fed.Stored(Transport::Rest, "AET2", 8, true);
  EXPECT_EQ(sampled + 1, fed.stats.Snapshot(500 * kMs)
                           .transports[static_cast<size_t>(Transport::Rest)]
                           .PartsOf(Phase::StorageWrite)
                           .sampled);
}


// A reading after a reset holds only what came after it, even when the streams then count as many
// values as before it.
TEST(IngestStats, AReadingAfterAResetHoldsOnlyWhatCameAfterIt)
{
  Fed fed;
  for (int i = 0; i < 10; i++)
  {
    fed.Stored(Transport::Dicom, "AET" + std::to_string(i % 3), 5);
  }
  EXPECT_EQ(5 * kMs, fed.stats.Snapshot(100 * kMs)
                       .transports[static_cast<size_t>(Transport::Dicom)]
                       .phases[static_cast<size_t>(Phase::StorageWrite)]
                       .Max());
  fed.stats.Reset(200 * kMs, 200 * kMs);
  for (int i = 0; i < 10; i++)
  {
    fed.Stored(Transport::Dicom, "AET" + std::to_string(i % 3), 70);
  }
  const StatsSnapshot after = fed.stats.Snapshot(300 * kMs);
  EXPECT_EQ(10u, StorageWrites(after, Transport::Dicom));
  EXPECT_EQ(
    70 * kMs,
    after.transports[static_cast<size_t>(Transport::Dicom)].phases[static_cast<size_t>(Phase::StorageWrite)].Max());
}


// The other readings of the streams (the failing streams, the association gaps, each stream's
// snapshot per phase mask) see every record too.
TEST(IngestStats, TheOtherReadingsOfTheStreamsSeeEveryRecord)
{
  Fed fed;
  fed.Stored(Transport::Dicom, "AET1", 5);
  const InstanceLabels labels = fed.Labels(Transport::Dicom, "AET1");
  EXPECT_EQ(1u, fed.stats.SnapshotEachStream().size());
  EXPECT_TRUE(fed.stats.SnapshotFailingStreams().empty());
  EXPECT_EQ(0u, fed.stats.SnapshotAssociationGaps().at(0).second.Count());

  fed.Stored(Transport::Rest, "AET2", 5);
  fed.stats.RecordPhase(Phase::ChangeDispatch, labels, 2 * kMs, 0);
  const StreamSnapshots each = fed.stats.SnapshotEachStream();
  ASSERT_EQ(2u, each.size());
  EXPECT_EQ(1u, each.at(0).second.phases[static_cast<size_t>(Phase::ChangeDispatch)].Count());
  // Another phase mask is read again, not taken from the copy of the first.
  const uint32_t storageOnly = 1u << static_cast<size_t>(Phase::StorageWrite);
  const uint32_t dispatchOnly = 1u << static_cast<size_t>(Phase::ChangeDispatch);
  EXPECT_EQ(
    0u,
    fed.stats.SnapshotEachStream(storageOnly).at(0).second.phases[static_cast<size_t>(Phase::ChangeDispatch)].Count());
  EXPECT_EQ(
    1u,
    fed.stats.SnapshotEachStream(dispatchOnly).at(0).second.phases[static_cast<size_t>(Phase::ChangeDispatch)].Count());

  fed.stats.RecordOutcome(Outcome::Failed, labels, 0);
  ASSERT_EQ(1u, fed.stats.SnapshotFailingStreams().size());
  EXPECT_EQ(1u, fed.stats.SnapshotFailingStreams()[0].second.outcomes[static_cast<size_t>(Outcome::Failed)]);

  InstanceMeasurement gap;
  gap.Set(Phase::AssociationGap, 40 * kMs);
  fed.stats.RecordPhaseOf(gap, Phase::AssociationGap, labels);
  const auto gaps = fed.stats.SnapshotAssociationGaps();
  ASSERT_EQ(1u, gaps.size());  // DICOM streams only
  EXPECT_EQ(1u, gaps[0].second.Count());
  EXPECT_EQ(40 * kMs, gaps[0].second.Max());
}


namespace
{
  int64_t ZeroClock()
  {
    return 0;
  }
}


// A window's reading follows the values recorded and the time (an old slot leaves the window); the
// covered time is the reader's. The parts' quantiles follow the split instances.
TEST(IngestStats, WindowsAndPartQuantilesFollowRecordsAndTime)
{
  LabelCatalog catalog{8};
  IngestStats stats{0, 0, 64, ZeroClock};
  RawLabels raw;
  raw.remoteAet = "AET";
  const InstanceLabels labels = catalog.Intern(Transport::Rest, raw, 1000);
  const auto store = [&](int64_t atNs, int64_t ms, bool split) {
    InstanceMeasurement m;
    m.hasTimeline = true;
    m.startNs = atNs - ms * kMs;
    m.storedNs = atNs;
    m.storedBytes = 1000;
    m.Set(Phase::StorageWrite, ms * kMs);
    if (split)
    {
      m.SetParts(Phase::StorageWrite, ms * kMs / 2, -1);
    }
    stats.RecordStored(m, labels);
  };
  const auto writes = [](const WindowSnapshot& window) {
    return window.transports[static_cast<size_t>(Transport::Rest)]
      .phases[static_cast<size_t>(Phase::StorageWrite)]
      .Count();
  };
  const int64_t s = 1000000000;
  store(5 * s, 3, true);
  EXPECT_EQ(1u, writes(stats.SnapshotWindow(Window::OneMinute, 6 * s)));
  EXPECT_EQ(1u, writes(stats.SnapshotWindow(Window::OneMinute, 7 * s)));
  EXPECT_EQ(7 * s, stats.SnapshotWindow(Window::OneMinute, 7 * s).coveredNs);
  store(8 * s, 4, false);
  EXPECT_EQ(2u, writes(stats.SnapshotWindow(Window::OneMinute, 9 * s)));
  // Nothing recorded since, but 80 s later the slots of 5 s and 8 s have left the minute.
  EXPECT_EQ(0u, writes(stats.SnapshotWindow(Window::OneMinute, 80 * s)));
  EXPECT_EQ(2u, writes(stats.SnapshotWindow(Window::FiveMinutes, 80 * s)));

  const auto cpuQuantiles = [&stats]() {
    const StatsSnapshot snapshot = stats.Snapshot(90 * s);
    return snapshot.PartQuantilesOf(Transport::Rest)[static_cast<size_t>(Phase::StorageWrite)].onCpu.Count();
  };
  EXPECT_EQ(1u, cpuQuantiles());
  EXPECT_EQ(1u, cpuQuantiles());
  store(91 * s, 6, true);
  EXPECT_EQ(2u, cpuQuantiles());
}
