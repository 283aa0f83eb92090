#include "Metrics/RecentInstances.h"

#include "Labels/LabelCatalog.h"
#include "Metrics/StatsQuery.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  // A record whose every field derives from `value`, so that a torn copy shows.
  RecentInstance Make(int64_t value, int64_t serverTotalNs = -2)
  {
    InstanceMeasurement measurement;
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      measurement.Set(static_cast<Phase>(p), value * 10 + static_cast<int64_t>(p), value);
    }
    if (serverTotalNs != -2)
    {
      measurement.Set(Phase::ServerTotal, value, serverTotalNs);
    }
    measurement.startNs = value;
    measurement.storedNs = value;
    InstanceLabels labels;
    labels.SetTransport(Transport::Dicom);
    RecentInstance instance;
    const std::string id = "id-" + std::to_string(value);
    FillRecentInstance(instance, measurement, value * 2, labels, Outcome::Stored, static_cast<uint32_t>(value % 1000),
                       id.c_str());
    return instance;
  }

  bool Consistent(const RecentInstance& instance)
  {
    const int64_t value = instance.measurement.startNs;
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      if (instance.measurement.phaseNs[p] != value || instance.measurement.phaseStartNs[p] != value * 10 + int64_t(p))
      {
        return false;
      }
    }
    return instance.measurement.storedNs == value && instance.startWallNs == value * 2 &&
           instance.thread == static_cast<uint32_t>(value % 1000) &&
           "id-" + std::to_string(value) == instance.instanceId;
  }
}


TEST(RecentInstances, KeepsTheLastCapacityRecordsInOrder)
{
  RecentInstances ring(16);
  EXPECT_EQ(0u, ring.Snapshot(0).held);
  for (int64_t i = 1; i <= 40; i++)
  {
    ring.Push(Make(i));
  }
  const RecentSnapshot snapshot = ring.Snapshot(0);
  EXPECT_EQ(16u, snapshot.capacity);
  EXPECT_EQ(40u, snapshot.pushed);
  EXPECT_EQ(16u, snapshot.held);
  EXPECT_EQ(25, snapshot.oldestStoredNs);
  ASSERT_EQ(16u, snapshot.instances.size());
  for (size_t i = 0; i < 16; i++)
  {
    EXPECT_EQ(int64_t(25 + i), snapshot.instances[i].measurement.startNs);
    EXPECT_EQ(24 + i, snapshot.instances[i].sequence);
    EXPECT_TRUE(Consistent(snapshot.instances[i]));
  }
  // Only those stored since the given time; the reach is still the whole ring's.
  const RecentSnapshot recent = ring.Snapshot(38);
  EXPECT_EQ(3u, recent.instances.size());
  EXPECT_EQ(25, recent.oldestStoredNs);
}


TEST(RecentInstances, ResetHidesEarlierRecords)
{
  RecentInstances ring(16);
  for (int64_t i = 1; i <= 5; i++)
  {
    ring.Push(Make(i));
  }
  ring.Reset();
  EXPECT_EQ(0u, ring.Snapshot(0).held);
  ring.Push(Make(6));
  const RecentSnapshot snapshot = ring.Snapshot(0);
  ASSERT_EQ(1u, snapshot.instances.size());
  EXPECT_EQ(0u, snapshot.instances[0].sequence);
  EXPECT_EQ(1u, snapshot.pushed);
}


TEST(RecentInstances, CapacityIsBoundedAndInstanceIdsAreCut)
{
  EXPECT_EQ(RecentInstances::kMinCapacity, RecentInstances(1).Capacity());
  EXPECT_EQ(RecentInstances::kMaxCapacity, RecentInstances(RecentInstances::kMaxCapacity * 2).Capacity());
  RecentInstance instance;
  const std::string longId(100, 'a');
  FillRecentInstance(instance, InstanceMeasurement(), 0, InstanceLabels(), Outcome::Stored, 1, longId.c_str());
  EXPECT_EQ(std::string(kMaxInstanceIdLength, 'a'), instance.instanceId);
  FillRecentInstance(instance, InstanceMeasurement(), 0, InstanceLabels(), Outcome::Stored, 1, nullptr);
  EXPECT_STREQ("", instance.instanceId);
}


TEST(RecentInstances, ConcurrentWritersAndAReaderSeeOnlyWholeRecords)
{
  RecentInstances ring(64);
  std::atomic<bool> done{false};
  std::vector<std::thread> writers;
  constexpr int64_t kPerWriter = 20000;
  for (int64_t w = 0; w < 3; w++)
  {
    writers.emplace_back([&ring, w] {
      for (int64_t i = 1; i <= kPerWriter; i++)
      {
        ring.Push(Make(w * kPerWriter + i));
      }
    });
  }
  uint64_t seen = 0;
  std::thread reader([&] {
    while (!done.load())
    {
      const RecentSnapshot snapshot = ring.Snapshot(0);
      for (const RecentInstance& instance : snapshot.instances)
      {
        ASSERT_TRUE(Consistent(instance)) << instance.measurement.startNs;
      }
      seen += snapshot.instances.size();
    }
  });
  for (std::thread& writer : writers)
  {
    writer.join();
  }
  done.store(true);
  reader.join();
  const RecentSnapshot last = ring.Snapshot(0);
  EXPECT_EQ(uint64_t(3 * kPerWriter), last.pushed);
  EXPECT_EQ(64u, last.held);  // a writer that gives up leaves the slot to the one that took it
  for (const RecentInstance& instance : last.instances)
  {
    EXPECT_TRUE(Consistent(instance));
  }
  EXPECT_GT(seen, 0u);
}


TEST(RecentInstances, SelectSlowestByPhase)
{
  RecentInstanceList instances;
  const int64_t totals[] = {5, 50, 7, 50, 1, 30};
  for (int64_t i = 0; i < 6; i++)
  {
    instances.push_back(Make(i + 1, totals[i]));
    instances.back().sequence = static_cast<uint64_t>(i);
  }
  instances.push_back(Make(99));
  instances.back().measurement.phaseNs[static_cast<size_t>(Phase::ServerTotal)] = InstanceMeasurement::kNotMeasured;

  const RecentInstanceList top = SelectSlowest(instances, Phase::ServerTotal, 3);
  ASSERT_EQ(3u, top.size());
  EXPECT_EQ(50, top[0].measurement.Phase(Phase::ServerTotal));
  EXPECT_EQ(3u, top[0].sequence);  // of two equal, the most recent first
  EXPECT_EQ(1u, top[1].sequence);
  EXPECT_EQ(30, top[2].measurement.Phase(Phase::ServerTotal));

  EXPECT_EQ(6u, SelectSlowest(instances, Phase::ServerTotal, 100).size());
  EXPECT_TRUE(SelectSlowest({}, Phase::Receive, 5).empty());
}


namespace
{
  RecentInstance FromSender(LabelCatalog& catalog, const char* aet, int64_t storedNs, int64_t serverTotalNs,
                            Outcome outcome = Outcome::Stored)
  {
    InstanceMeasurement measurement;
    measurement.Set(Phase::ServerTotal, storedNs - serverTotalNs, serverTotalNs);
    measurement.hasTimeline = true;
    measurement.startNs = storedNs - serverTotalNs;
    measurement.storedNs = storedNs;
    measurement.storedBytes = 1000;
    RawLabels raw;
    raw.remoteAet = aet;
    raw.remoteIp = "10.0.0.1";
    const InstanceLabels labels = catalog.Intern(Transport::Dicom, raw, 1000);
    RecentInstance instance;
    FillRecentInstance(instance, measurement, storedNs, labels, outcome, 1, nullptr);
    return instance;
  }

  const TransportSnapshot& Group(const GroupedSnapshot& grouped, const std::string& name)
  {
    for (size_t i = 0; i < grouped.groupNames.size(); i++)
    {
      if (grouped.groupNames[i] == name)
      {
        return grouped.groups[i].second;
      }
    }
    static const TransportSnapshot none;
    return none;
  }
}


TEST(RecentInstances, AWindowsSendersAreExactAndNamedAsWhenTheyWereRecorded)
{
  // 4 label values: the senders of the window keep their names though the values aged out since.
  constexpr int64_t kS = 1000000000;
  LabelCatalog catalog(4);
  RecentInstances ring(64);
  ring.Push(FromSender(catalog, "OLD", 10 * kS, 5000000));  // before the window
  for (int i = 0; i < 3; i++)
  {
    ring.Push(FromSender(catalog, "CT1", (100 + i) * kS, 2000000));
  }
  ring.Push(FromSender(catalog, "CT1", 103 * kS, 2000000, Outcome::AlreadyStored));
  catalog.Rotate();  // the labels age out: CT1 is named by the tables of before
  ring.Push(FromSender(catalog, "MR2", 110 * kS, 8000000));

  StatsQuery query;
  query.hasWindow = true;
  query.hasGroupBy = true;
  query.groupBy = LabelDimension::RemoteAet;
  const int64_t fromNs = 60 * kS;
  GroupedSnapshot grouped = GroupRecentInstances(ring.Snapshot(fromNs), query, catalog, fromNs);
  EXPECT_TRUE(grouped.fromRecent);
  EXPECT_TRUE(grouped.recentComplete);
  EXPECT_EQ(5u, grouped.recentMatched);
  ASSERT_EQ(2u, grouped.groups.size());
  const TransportSnapshot& ct1 = Group(grouped, "CT1");
  EXPECT_EQ(3u, ct1.outcomes[static_cast<size_t>(Outcome::Stored)]);
  EXPECT_EQ(1u, ct1.outcomes[static_cast<size_t>(Outcome::AlreadyStored)]);
  EXPECT_EQ(3u, ct1.phases[static_cast<size_t>(Phase::ServerTotal)].Count());
  EXPECT_EQ(1u, Group(grouped, "MR2").outcomes[static_cast<size_t>(Outcome::Stored)]);
  EXPECT_EQ(5u, grouped.transports[static_cast<size_t>(Transport::Dicom)].outcomes[0] +
                  grouped.transports[static_cast<size_t>(Transport::Dicom)].outcomes[1]);

  // A label filter, by name.
  query.hasGroupBy = false;
  query.labels = {{LabelDimension::RemoteAet, "MR2"}};
  grouped = GroupRecentInstances(ring.Snapshot(fromNs), query, catalog, fromNs);
  EXPECT_EQ(1u, grouped.recentMatched);
  EXPECT_EQ(
    8000000,
    grouped.transports[static_cast<size_t>(Transport::Dicom)].phases[static_cast<size_t>(Phase::ServerTotal)].Max());

  // A ring that wrapped within the window holds its last part only, and says from when.
  RecentInstances small(16);
  for (int i = 0; i < 40; i++)
  {
    small.Push(FromSender(catalog, "MR2", (100 + i) * kS, 1000000));
  }
  query.labels.clear();
  grouped = GroupRecentInstances(small.Snapshot(fromNs), query, catalog, fromNs);
  EXPECT_FALSE(grouped.recentComplete);
  EXPECT_EQ(16u, grouped.recentMatched);
  EXPECT_EQ(124 * kS, grouped.recentFromNs);
}
