#include "Correlation/AssociationTracker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <queue>
#include <set>
#include <utility>
#include <vector>

using IngestPerf::AssociationTracker;

namespace
{
  constexpr int64_t kMs = 1000000;
  constexpr int64_t kTimeout = 30000 * kMs;
  constexpr IngestPerf::LabelId kAet = 5;
}

TEST(AssociationTracker, OneAssociationGivesEveryGapButTheFirst)
{
  AssociationTracker tracker(256, kTimeout);
  int64_t received = 0;
  int64_t stored = 0;
  for (int i = 0; i < 10; i++)
  {
    received = stored + 45 * kMs;  // the Nagle wait between two instances
    const int64_t gap = tracker.InstanceStored(7, kAet, received, received + 5 * kMs);
    stored = received + 5 * kMs;
    if (i == 0)
    {
      EXPECT_EQ(-1, gap);
    }
    else
    {
      EXPECT_EQ(45 * kMs, gap);
    }
  }
}


TEST(AssociationTracker, PeersAreIndependent)
{
  AssociationTracker tracker(256, kTimeout);
  tracker.InstanceStored(1, kAet, 100 * kMs, 110 * kMs);
  tracker.InstanceStored(2, kAet, 105 * kMs, 120 * kMs);
  EXPECT_EQ(10 * kMs, tracker.InstanceStored(2, kAet, 130 * kMs, 140 * kMs));
  EXPECT_EQ(40 * kMs, tracker.InstanceStored(1, kAet, 150 * kMs, 160 * kMs));
}


TEST(AssociationTracker, SimultaneousAssociationsKeepCountAndMean)
{
  AssociationTracker tracker(256, kTimeout);
  // Two associations from one AET, interleaved, each with its own gap (10 ms and 30 ms).
  tracker.InstanceStored(9, kAet, 0, 5 * kMs);                             // A1 ends at 5
  tracker.InstanceStored(9, kAet, 1 * kMs, 6 * kMs);                       // B1 ends at 6
  const int64_t g1 = tracker.InstanceStored(9, kAet, 15 * kMs, 20 * kMs);  // A2 arrives at 15 (gap 10)
  const int64_t g2 = tracker.InstanceStored(9, kAet, 36 * kMs, 40 * kMs);  // B2 arrives at 36 (gap 30)
  ASSERT_GE(g1, 0);
  ASSERT_GE(g2, 0);
  EXPECT_EQ(40 * kMs, g1 + g2);
}


TEST(AssociationTracker, AnInstanceThatArrivedBeforeEveryEndHasNoGap)
{
  AssociationTracker tracker(256, kTimeout);
  tracker.InstanceStored(3, kAet, 0, 50 * kMs);
  // Received at 20 ms, i.e. during the previous instance: a second association's first instance.
  EXPECT_EQ(-1, tracker.InstanceStored(3, kAet, 20 * kMs, 60 * kMs));
}


TEST(AssociationTracker, EndsOlderThanTheScpTimeoutAreDropped)
{
  AssociationTracker tracker(256, kTimeout);
  tracker.InstanceStored(4, kAet, 0, 10 * kMs);
  EXPECT_EQ(-1, tracker.InstanceStored(4, kAet, 10 * kMs + kTimeout + 1, 10 * kMs + kTimeout + 5));
  // Without a timeout (DicomScpTimeout = 0), no end expires.
  AssociationTracker unlimited(256, 0);
  unlimited.InstanceStored(4, kAet, 0, 10 * kMs);
  EXPECT_EQ(kTimeout * 2, unlimited.InstanceStored(4, kAet, 10 * kMs + 2 * kTimeout, 3 * kTimeout));
}


TEST(AssociationTracker, UnknownReceiveTimeOnlyRemembersTheEnd)
{
  AssociationTracker tracker(256, kTimeout);
  EXPECT_EQ(-1, tracker.InstanceStored(5, kAet, 0, 10 * kMs));
  EXPECT_EQ(5 * kMs, tracker.InstanceStored(5, kAet, 15 * kMs, 20 * kMs));
}


TEST(AssociationTracker, MemoryIsBoundedPerPeer)
{
  AssociationTracker tracker(1, kTimeout);
  for (int i = 0; i < 1000; i++)
  {
    tracker.InstanceStored(6, kAet, 0, (i + 1) * kMs);  // received at 0: never paired, only pushed
  }
  // Only the newest kEndsPerPeer ends are kept: the oldest kept ended at 985 ms.
  EXPECT_EQ((2000 - 985) * kMs, tracker.InstanceStored(6, kAet, 2000 * kMs, 2001 * kMs));
}


TEST(AssociationTracker, ChainsAreCountedOnceIdlePastTheTimeout)
{
  AssociationTracker tracker(256, kTimeout);
  int64_t stored = 0;
  for (int i = 0; i < 10; i++)
  {
    const int64_t received = 100 * kMs + i * 50 * kMs;
    tracker.InstanceStored(7, kAet, received, received + 5 * kMs);
    stored = received + 5 * kMs;
  }
  std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(stored);
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(0u, peers[0].finished);
  EXPECT_EQ(1u, peers[0].inProgress);  // still open as far as anyone can tell
  EXPECT_EQ(kAet, peers[0].remoteAet);

  EXPECT_EQ(0u, tracker.Snapshot(stored + kTimeout / 2)[0].finished);  // not idle long enough
  peers = tracker.Snapshot(stored + kTimeout + 1);
  EXPECT_EQ(1u, peers[0].finished);
  EXPECT_EQ(0u, peers[0].inProgress);
  EXPECT_EQ(10, peers[0].instancesPerAssociation.Max());
  EXPECT_EQ(stored - 100 * kMs, peers[0].durationNs.Max());
  // Reading changed nothing: seen from earlier, the association is still open.
  EXPECT_EQ(1u, tracker.Snapshot(stored + 1)[0].inProgress);
  EXPECT_EQ(0u, tracker.Snapshot(stored + 1)[0].finished);

  // A new association from the same AET starts a new chain.
  // The first one is then finished in the tracker itself, whenever it is read.
  tracker.InstanceStored(7, kAet, stored + 2 * kTimeout, stored + 2 * kTimeout + kMs);
  EXPECT_EQ(1u, tracker.Snapshot(stored + 2 * kTimeout + kMs)[0].finished);
  peers = tracker.Snapshot(stored + 4 * kTimeout);
  EXPECT_EQ(2u, peers[0].finished);
  EXPECT_EQ(1, peers[0].instancesPerAssociation.Min());

  tracker.ResetStatistics(stored + 4 * kTimeout);
  EXPECT_TRUE(tracker.Snapshot(stored + 4 * kTimeout).empty());  // nothing started since
}


TEST(AssociationTracker, TwoSimultaneousAssociationsAreTwoChains)
{
  AssociationTracker tracker(256, kTimeout);
  for (int i = 0; i < 5; i++)
  {
    const int64_t base = i * 100 * kMs;
    tracker.InstanceStored(3, kAet, base + 1 * kMs, base + 10 * kMs);  // association A
    tracker.InstanceStored(3, kAet, base + 5 * kMs, base + 20 * kMs);  // association B, overlapping A
  }
  const std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(500 * kMs + kTimeout + 1);
  EXPECT_EQ(2u, peers[0].finished);
  EXPECT_EQ(10u, peers[0].instancesPerAssociation.Sum());
}


TEST(AssociationTracker, AetsWithTheSameHashSlotKeepTheirOwnChains)
{
  AssociationTracker tracker(8, kTimeout);
  // 3 and 11 land on the same slot of 8: they must not clear each other's chains.
  for (int i = 0; i < 5; i++)
  {
    const int64_t base = i * 100 * kMs;
    const int64_t a = tracker.InstanceStored(3, kAet, base + 1 * kMs, base + 10 * kMs);
    const int64_t b = tracker.InstanceStored(11, kAet + 1, base + 2 * kMs, base + 20 * kMs);
    if (i > 0)
    {
      EXPECT_EQ(91 * kMs, a);
      EXPECT_EQ(82 * kMs, b);
    }
  }
  EXPECT_EQ(2u, tracker.Snapshot(0).size());
  // A full table still works: the newcomer takes its hash's slot over.
  AssociationTracker tiny(1, kTimeout);
  tiny.InstanceStored(1, kAet, kMs, 2 * kMs);
  EXPECT_EQ(-1, tiny.InstanceStored(2, kAet, 3 * kMs, 4 * kMs));
  EXPECT_EQ(1 * kMs, tiny.InstanceStored(2, kAet, 5 * kMs, 6 * kMs));
}


namespace
{
  // The readings of the plugin's thread: these connections (cookie = fd) from these addresses.
  void Read(IngestPerf::DicomConnections& connections, std::vector<std::pair<int, IngestPerf::LabelId>> open,
            int64_t nowNs)
  {
    std::vector<IngestPerf::DicomConnections::Reading> readings;
    for (const auto& connection : open)
    {
      readings.push_back({static_cast<uint64_t>(connection.first), connection.first, connection.second});
    }
    connections.Update(readings.data(), readings.size(), nowNs);
  }

  constexpr IngestPerf::LabelId kIpA = 7;
  constexpr IngestPerf::LabelId kIpB = 8;
}


TEST(AssociationTracker, BackToBackAssociationsFromOneSenderAreTold)
{
  // A script running storescu once per file: one AET, one address, a new connection each time,
  // 80-120 ms apart, each on whichever worker thread.
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  int64_t now = 0;
  for (int i = 0; i < 4; i++)
  {
    Read(connections, {{100 + i, kIpA}}, now);  // connection i opened, the previous one closed
    const uint64_t cookie = connections.Attribute(kIpA);
    ASSERT_EQ(uint64_t(100 + i), cookie);
    EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, now + 5 * kMs, now + 10 * kMs, kIpA, cookie));
    now += 100 * kMs;
  }
  Read(connections, {}, now);
  std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(now);
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(4u, peers[0].finished);  // at once: their connections closed, no timeout to wait for
  EXPECT_EQ(0u, peers[0].inProgress);
  EXPECT_EQ(4u, peers[0].byConnection);
  EXPECT_EQ(1, peers[0].instancesPerAssociation.Max());
}


TEST(AssociationTracker, AConnectionSeenGoneLateClosedAfterItsLastInstanceNotWhenSeen)
{
  // The plugin's thread checks the connections at each C-STORE instance, not on a clock: a sender
  // that opens an association per instance has its previous one seen gone only at the next
  // instance's check, 100 ms after it closed. It closed after its last instance (ingest path, 10 ms)
  // and after the reading that last saw it (5 ms): the next association's instance, which arrived
  // at 95 ms, is not the previous one's.
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  Read(connections, {{100, kIpA}}, 5 * kMs);
  connections.SetRemoteAet(100, kAet, 10 * kMs);
  EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, 8 * kMs, 10 * kMs, kIpA, 100));
  const auto gone = [](int) -> uint64_t { return 0; };  // its descriptor holds nothing any more
  EXPECT_EQ(1u, connections.CheckOpen(100 * kMs, gone));
  EXPECT_TRUE(connections.IsOpen(100, 10 * kMs));
  EXPECT_FALSE(connections.IsOpen(100, 95 * kMs));
  Read(connections, {{101, kIpA}}, 100 * kMs);  // the new association, read before its OnStored
  EXPECT_EQ(101u, connections.Attribute(kIpA, kAet));
  EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, 95 * kMs, 101 * kMs, kIpA, 101));
  const std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(101 * kMs);
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(1u, peers[0].finished);
  EXPECT_EQ(1u, peers[0].inProgress);
}


TEST(AssociationTracker, AnInstanceOfAnUnknownConnectionIsNeverLinkedToAKnownOne)
{
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  Read(connections, {{5, kIpA}}, 0);
  tracker.InstanceStored(1, kAet, 1 * kMs, 2 * kMs, kIpA, connections.Attribute(kIpA));
  EXPECT_EQ(8 * kMs, tracker.InstanceStored(1, kAet, 10 * kMs, 12 * kMs, kIpA, connections.Attribute(kIpA)));
  // The association closed (read), and another opened, not read yet: no connection is known.
  Read(connections, {}, 50 * kMs);
  bool stale = false;
  EXPECT_EQ(0u, connections.Attribute(kIpA, IngestPerf::kUnidentified, IngestPerf::DicomConnections::kNow, stale));
  EXPECT_TRUE(stale);  // the plugin's thread is asked for a reading
  EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, 100 * kMs, 110 * kMs, kIpA, 0));
  // Its next instance is linked to it (inferred), and the first association is over.
  EXPECT_EQ(10 * kMs, tracker.InstanceStored(1, kAet, 120 * kMs, 125 * kMs, kIpA, 0));
  Read(connections, {{6, kIpA}}, 130 * kMs);
  const std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(130 * kMs);
  EXPECT_EQ(1u, peers[0].finished);
  EXPECT_EQ(1u, peers[0].inProgress);
  EXPECT_EQ(2, peers[0].instancesPerAssociation.Max());
}


TEST(AssociationTracker, SeveralConnectionsFromOneAddressAreInferred)
{
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  Read(connections, {{5, kIpA}, {6, kIpA}, {7, kIpB}}, 0);
  EXPECT_EQ(0u, connections.Attribute(kIpA));  // which of the two is not known
  EXPECT_EQ(7u, connections.Attribute(kIpB));
  tracker.InstanceStored(1, kAet, 1 * kMs, 2 * kMs, kIpA, 0);
  tracker.InstanceStored(2, kAet + 1, 1 * kMs, 2 * kMs, kIpB, 7);
  // Read again after the instances: the connections of A closed, the inferred chain is over.
  Read(connections, {{7, kIpB}}, 10 * kMs);
  for (const IngestPerf::PeerAssociations& peer : tracker.Snapshot(10 * kMs))
  {
    const bool inferred = peer.remoteAet == kAet;
    EXPECT_EQ(inferred ? 1u : 0u, peer.finished);
    EXPECT_EQ(inferred ? 0u : 1u, peer.inProgress);
    EXPECT_EQ(inferred ? 1u : 0u, peer.inferred);
  }
}


TEST(AssociationTracker, AnAssociationGoesOnWhenOtherConnectionsOpenFromItsAddress)
{
  // Four storescu at once from one address: the first instance of one came while its connection
  // was the address's only one; the next ones, with four open, cannot be told by address.
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  Read(connections, {{5, kIpA}}, 0);
  const uint64_t cookie = connections.Attribute(kIpA);
  ASSERT_EQ(5u, cookie);
  EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, 1 * kMs, 2 * kMs, kIpA, cookie));
  Read(connections, {{5, kIpA}, {6, kIpA}, {7, kIpA}}, 3 * kMs);
  ASSERT_EQ(0u, connections.Attribute(kIpA));
  EXPECT_EQ(8 * kMs, tracker.InstanceStored(1, kAet, 10 * kMs, 12 * kMs, kIpA, 0));
  EXPECT_EQ(8 * kMs, tracker.InstanceStored(1, kAet, 20 * kMs, 22 * kMs, kIpA, 0));
  const std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(25 * kMs);
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(1u, peers[0].inProgress);  // one association of 3, still on its connection
  EXPECT_EQ(1u, peers[0].byConnection);
  EXPECT_EQ(0u, peers[0].inferred);
}


TEST(AssociationTracker, AfterAResetOnlyWhatStartedAfterItCounts)
{
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  Read(connections, {{5, kIpA}}, 0);
  tracker.InstanceStored(1, kAet, 1 * kMs, 2 * kMs, kIpA, 5);
  tracker.ResetStatistics(5 * kMs);
  // The association goes on: its gap across the reset is not counted, the next one is.
  EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, 10 * kMs, 12 * kMs, kIpA, 5));
  EXPECT_EQ(8 * kMs, tracker.InstanceStored(1, kAet, 20 * kMs, 22 * kMs, kIpA, 5));
  EXPECT_TRUE(tracker.Snapshot(30 * kMs).empty());  // it started before the reset
  Read(connections, {{6, kIpA}}, 40 * kMs);
  tracker.InstanceStored(1, kAet, 41 * kMs, 42 * kMs, kIpA, 6);
  const std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(50 * kMs);
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(0u, peers[0].finished);  // the one before the reset is not counted when it closes
  EXPECT_EQ(1u, peers[0].inProgress);
}


TEST(AssociationTracker, AetsBeyondTheLabelValuesShareOneOtherRow)
{
  // 40 calling AETs: 32 with a label of their own, 8 labelled "(other)" (MaxLabelValues 32), each
  // with one association of 3 instances, over by the timeout when read.
  AssociationTracker tracker(256, kTimeout);
  for (uint64_t aet = 1; aet <= 40; aet++)
  {
    const IngestPerf::LabelId label = aet <= 32 ? static_cast<IngestPerf::LabelId>(aet + 1) : IngestPerf::kOtherLabel;
    const int64_t start = static_cast<int64_t>(aet) * 1000 * kMs;
    for (int64_t i = 0; i < 3; i++)
    {
      tracker.InstanceStored(aet, label, start + i * 10 * kMs, start + i * 10 * kMs + 5 * kMs);
    }
  }
  // Four of the "(other)" AETs and two of their own come back after the timeout: their first
  // association is finished in the tracker (its histograms), the second over when read.
  for (uint64_t aet : {31, 32, 33, 34, 35, 36})
  {
    const IngestPerf::LabelId label = aet <= 32 ? static_cast<IngestPerf::LabelId>(aet + 1) : IngestPerf::kOtherLabel;
    const int64_t start = 50 * kTimeout + static_cast<int64_t>(aet) * 1000 * kMs;
    tracker.InstanceStored(aet, label, start, start + 7 * kMs);
  }
  const auto rows = tracker.Snapshot(100 * kTimeout);
  ASSERT_EQ(33u, rows.size());
  std::set<IngestPerf::LabelId> names;
  uint64_t finished = 0;
  uint64_t aets = 0;
  uint64_t instances = 0;
  for (const auto& row : rows)
  {
    EXPECT_TRUE(names.insert(row.remoteAet).second) << "two rows named " << row.remoteAet;
    finished += row.finished;
    aets += row.aets;
    instances += row.instancesPerAssociation.Sum();
    EXPECT_EQ(row.remoteAet == IngestPerf::kOtherLabel ? 8u : 1u, row.aets);
  }
  EXPECT_EQ(IngestPerf::kOtherLabel, rows.back().remoteAet);
  EXPECT_EQ(12u, rows.back().finished);
  EXPECT_EQ(12u, rows.back().instancesPerAssociation.Count());
  EXPECT_EQ(12u, rows.back().durationNs.Count());
  EXPECT_EQ(12u, rows.back().byConnection + rows.back().inferred);
  EXPECT_EQ(3 * 8u + 4u, rows.back().instancesPerAssociation.Sum());
  EXPECT_EQ(7 * kMs, rows.back().durationNs.Min());  // the second associations: one instance each
  EXPECT_EQ(2u, rows[30].finished);
  EXPECT_EQ(2u, rows[30].durationNs.Count());
  EXPECT_EQ(46u, finished);
  EXPECT_EQ(40u, aets);
  EXPECT_EQ(126u, instances);
}


TEST(AssociationTracker, AnAssociationsFirstInstancesBeforeItsConnectionWasReadAreItsOwn)
{
  // The plugin's thread reads the connections after the association's first instance: that instance
  // was inferred, the next one's connection is known, and the gap between them is the association's.
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  Read(connections, {}, 0);
  EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, 10 * kMs, 12 * kMs, kIpA, 0));
  Read(connections, {{5, kIpA}}, 15 * kMs);  // opened after the reading at 0
  EXPECT_EQ(8 * kMs, tracker.InstanceStored(1, kAet, 20 * kMs, 22 * kMs, kIpA, 5));
  std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(25 * kMs);
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(1u, peers[0].inProgress);
  EXPECT_EQ(1u, peers[0].byConnection);
  EXPECT_EQ(0u, peers[0].inferred);

  // An inferred chain that started before a connection opened is not that connection's.
  EXPECT_EQ(-1, tracker.InstanceStored(2, kAet + 1, 31 * kMs, 32 * kMs, kIpB, 0));
  Read(connections, {{5, kIpA}}, 40 * kMs);
  Read(connections, {{5, kIpA}, {6, kIpB}}, 50 * kMs);  // 6 opened after the reading at 40
  EXPECT_EQ(-1, tracker.InstanceStored(2, kAet + 1, 55 * kMs, 56 * kMs, kIpB, 6));
}


TEST(AssociationTracker, AConnectionThatCarriesAnotherAetIsNotAnInstancesOwn)
{
  // Two senders from one address: the second's association opened after the last reading, which
  // knows only the first's connection (with its AET): the second's instance is not attributed to it.
  IngestPerf::DicomConnections connections;
  Read(connections, {{5, kIpA}}, 0);
  connections.SetRemoteAet(5, 11);
  bool stale = false;
  EXPECT_EQ(5u, connections.Attribute(kIpA, 11, IngestPerf::DicomConnections::kNow, stale));
  EXPECT_FALSE(stale);
  EXPECT_EQ(0u, connections.Attribute(kIpA, 12, IngestPerf::DicomConnections::kNow, stale));
  EXPECT_TRUE(stale);  // read again: its own connection is new
  EXPECT_EQ(5u, connections.Attribute(kIpA, IngestPerf::kUnidentified, IngestPerf::DicomConnections::kNow, stale));
}


TEST(AssociationTracker, InstancesRecordedAfterTheirAssociationClosedAreAsOfTheirTime)
{
  // The plugin's thread records instances after they were stored (IngestRecorder's queue): by then
  // their association's connection may have closed. A fast association of 12 instances in 60 ms.
  for (const bool readDuringIt : {true, false})
  {
    IngestPerf::DicomConnections connections;
    AssociationTracker tracker(16, kTimeout, &connections);
    Read(connections, {}, 0);
    if (readDuringIt)
    {
      Read(connections, {{5, kIpA}}, 30 * kMs);     // seen open once
      connections.SetRemoteAet(5, kAet, 60 * kMs);  // its last instance, named on the ingest path
    }
    Read(connections, {}, 100 * kMs);  // gone: the association ended, after its last instance
    int gaps = 0;
    for (int i = 0; i < 12; i++)  // recorded at 110 ms
    {
      const int64_t stored = (i + 1) * 5 * kMs;
      const uint64_t cookie = connections.Attribute(kIpA, kAet, stored);
      EXPECT_EQ(readDuringIt ? 5u : 0u, cookie);
      gaps += tracker.InstanceStored(1, kAet, stored - 2 * kMs, stored, kIpA, cookie) >= 0 ? 1 : 0;
    }
    EXPECT_EQ(11, gaps) << readDuringIt;  // one association: every instance but the first ends a gap
    const std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(110 * kMs);
    ASSERT_EQ(1u, peers.size());
    EXPECT_EQ(1u, peers[0].finished) << readDuringIt;  // over: no connection from its address is left
    EXPECT_EQ(12, peers[0].instancesPerAssociation.Max());
    EXPECT_EQ(readDuringIt ? 1u : 0u, peers[0].byConnection);
  }
}


TEST(AssociationTracker, AetsBeyondTheTableAgeOutIntoOneRowAndEveryAssociationIsCountedOnce)
{
  // 4 slots, 40 calling AETs one after the other, 3 instances each (one association): every
  // association is counted, named while its AET is in the table, in the aged-out row afterwards;
  // the AETs of the last minutes are the ones named.
  AssociationTracker tracker(4, kTimeout);
  int64_t now = 0;
  for (uint64_t aet = 1; aet <= 40; aet++)
  {
    for (int i = 0; i < 3; i++)
    {
      now += 10 * kMs;
      tracker.InstanceStored(1000 + aet, static_cast<IngestPerf::LabelId>(2 + aet % 200), now, now + kMs);
    }
  }
  now += 2 * kTimeout;
  uint64_t finished = 0, inProgress = 0, agedAets = 0, named = 0;
  for (const auto& row : tracker.Snapshot(now))
  {
    finished += row.finished;
    inProgress += row.inProgress;
    if (row.agedOut)
    {
      agedAets = row.aets;
      EXPECT_EQ(row.finished, row.instancesPerAssociation.Count());
      EXPECT_EQ(3, row.instancesPerAssociation.Max());
    }
    else
    {
      named++;
      EXPECT_GE(row.remoteAet, 2 + 37);  // among the last AETs
    }
  }
  EXPECT_EQ(40u, finished + inProgress);
  EXPECT_EQ(0u, tracker.Skipped());
  EXPECT_EQ(40u, agedAets + named);
  EXPECT_EQ(36u, agedAets);
  EXPECT_EQ(36u, tracker.AgedOut());

  tracker.ResetStatistics(now);
  for (const auto& row : tracker.Snapshot(now))
  {
    EXPECT_FALSE(row.agedOut);  // the reset empties the aged-out row
  }
}


TEST(AssociationTracker, AnAssociationsFirstInstanceBeforeItWasReadIsItsOwnAmongSeveralFromOneAddress)
{
  // Four senders from one address start at once: the first instance of one came before any reading
  // saw its connection, among three others open from there; the next instance, on the connection now
  // known, continues its chain (its gap is measured, not lost).
  IngestPerf::DicomConnections connections;
  AssociationTracker tracker(16, kTimeout, &connections);
  Read(connections, {{5, kIpA}, {6, kIpA}, {7, kIpA}}, 0);
  EXPECT_EQ(-1, tracker.InstanceStored(1, kAet, 10 * kMs, 12 * kMs, kIpA, 0));
  Read(connections, {{5, kIpA}, {6, kIpA}, {7, kIpA}, {8, kIpA}}, 15 * kMs);  // the first to see 8
  EXPECT_EQ(8 * kMs, tracker.InstanceStored(1, kAet, 20 * kMs, 22 * kMs, kIpA, 8));
  std::vector<IngestPerf::PeerAssociations> peers = tracker.Snapshot(25 * kMs);
  ASSERT_EQ(1u, peers.size());
  EXPECT_EQ(1u, peers[0].inProgress);
}


namespace
{
  // The sockets Orthanc holds in the simulation below (CookieOf is a plain function).
  struct ChurnConnection
  {
    uint64_t cookie;
    int fd;
  };
  std::vector<ChurnConnection> churnOpen;

  uint64_t ChurnCookieOf(int fd)
  {
    for (const ChurnConnection& open : churnOpen)
    {
      if (open.fd == fd)
      {
        return open.cookie;
      }
    }
    return 0;
  }
}


TEST(AssociationTracker, SendersBehindOneAddressAreCountedWithinOnePointSevenPercent)
{
  // Six calling AETs behind one address (a gateway, a NAT, the modalities of one host), each opening
  // associations one after the other (1-4 instances, then a pause of 5-400 ms), for a simulated
  // minute; the plugin's thread checks the connections at each instance's filter (a reading if one
  // closed), reads them when an instance's connection is not known (at most every 50 ms) and once a
  // second. Instances are attributed to a connection only when one connection from the address may
  // carry their AET; the others are inferred, and two associations of one AET that were both wholly
  // inferred, back to back, can count as one, and one can be split: 1.6% off the truth (535 of
  // 32,508). Three changes that did better here did worse in real runs and were reverted (NEWS): a
  // guessed AET kept only when every instance named it (1.2%), an inferred association ended once
  // no connection that may carry its AET is left (0.9%), an instance's connection chosen among
  // those that carried no other AET (0.9%): associations split under load in
  // test_parallel_associations_from_distinct_peers, the gdcmscu diagnosis scenario and the soak.
  long error = 0;
  long truthTotal = 0;
  for (uint32_t seed = 1; seed <= 20; seed++)
  {
    std::srand(seed);
    const auto uniform = [](int low, int high) { return low + std::rand() % (high - low + 1); };
    IngestPerf::DicomConnections connections;
    AssociationTracker tracker(64, kTimeout, &connections);
    churnOpen.clear();
    enum Kind
    {
      Open,
      Filter,
      Stored,
      Close
    };
    struct Event
    {
      int64_t ns;
      Kind kind;
      int aet;
      uint64_t cookie;
      int64_t receivedNs;
      int left;  // instances after this one
      bool operator<(const Event& other) const { return ns > other.ns; }
    };
    std::priority_queue<Event> events;
    constexpr int kAets = 6;
    std::vector<long> truth(kAets, 0);
    uint64_t nextCookie = 1000;
    for (int aet = 0; aet < kAets; aet++)
    {
      events.push({uniform(0, 300) * kMs, Open, aet, nextCookie++, 0, uniform(0, 3)});
    }
    int64_t lastReadingNs = -kTimeout;
    int64_t readingDueNs = INT64_MAX;
    int64_t nextTickNs = 1000 * kMs;
    const auto read = [&](int64_t nowNs) {
      std::vector<IngestPerf::DicomConnections::Reading> open;
      for (const ChurnConnection& c : churnOpen)
      {
        open.push_back({c.cookie, c.fd, kIpA});
      }
      connections.Update(open.data(), open.size(), nowNs);
      lastReadingNs = nowNs;
    };
    const int64_t endNs = 60000 * kMs;
    while (!events.empty())
    {
      const Event event = events.top();
      if (readingDueNs <= event.ns)  // the thread's own work first when it is due
      {
        read(readingDueNs);
        readingDueNs = INT64_MAX;
        continue;
      }
      if (nextTickNs <= event.ns)
      {
        if (nextTickNs - lastReadingNs >= 500 * kMs)
        {
          read(nextTickNs);
        }
        nextTickNs += 1000 * kMs;
        continue;
      }
      events.pop();
      const IngestPerf::LabelId aet = static_cast<IngestPerf::LabelId>(20 + event.aet);
      switch (event.kind)
      {
        case Open:
        {
          int fd = 10;  // the lowest free descriptor, as accept gives
          while (ChurnCookieOf(fd) != 0)
          {
            fd++;
          }
          churnOpen.push_back({event.cookie, fd});
          truth[event.aet]++;
          events.push({event.ns + uniform(2, 4) * kMs, Filter, event.aet, event.cookie, 0, event.left});
          break;
        }
        case Filter:
        {
          const int64_t checkNs = event.ns + kMs / 3;  // the thread's check, 300 us after the filter
          if (connections.CheckOpen(checkNs, ChurnCookieOf) > 0)
          {
            read(checkNs);
          }
          events.push({event.ns + uniform(3, 6) * kMs, Stored, event.aet, event.cookie, event.ns, event.left});
          break;
        }
        case Stored:
        {
          bool stale = false;
          const uint64_t cookie = connections.Attribute(kIpA, aet, IngestPerf::DicomConnections::kNow, stale);
          if (stale)
          {
            readingDueNs = std::min(readingDueNs, std::max(event.ns + kMs / 3, lastReadingNs + 50 * kMs));
          }
          if (cookie != 0)  // as IngestRecorder::NameConnection
          {
            connections.SetRemoteAet(cookie, aet, event.ns);
          }
          else
          {
            connections.SetRemoteAetBeforeReading(kIpA, aet);
          }
          tracker.InstanceStored(static_cast<uint64_t>(1 + event.aet), aet, event.receivedNs, event.ns, kIpA, cookie);
          const Kind next = event.left > 0 ? Filter : Close;
          events.push({event.ns + uniform(1, 3) * kMs, next, event.aet, event.cookie, 0, event.left - 1});
          break;
        }
        case Close:
        {
          churnOpen.erase(std::remove_if(churnOpen.begin(), churnOpen.end(),
                                         [&](const ChurnConnection& c) { return c.cookie == event.cookie; }),
                          churnOpen.end());
          const int64_t nextOpenNs = event.ns + uniform(5, 400) * kMs;
          if (nextOpenNs < endNs)
          {
            events.push({nextOpenNs, Open, event.aet, nextCookie++, 0, uniform(0, 3)});
          }
          break;
        }
      }
    }
    read(endNs + 1000 * kMs);
    const std::vector<IngestPerf::PeerAssociations> rows = tracker.Snapshot(endNs + 2000 * kMs);
    ASSERT_EQ(size_t(kAets), rows.size());
    for (const IngestPerf::PeerAssociations& row : rows)
    {
      const int aet = static_cast<int>(row.remoteAet) - 20;
      ASSERT_TRUE(aet >= 0 && aet < kAets);
      EXPECT_EQ(0u, row.inProgress);
      EXPECT_GT(row.byConnection, 0u);
      error += std::labs(static_cast<long>(row.finished) - truth[aet]);
      truthTotal += truth[aet];
    }
  }
  EXPECT_GT(truthTotal, 30000);
  EXPECT_LE(error * 1000, truthTotal * 17) << error << " of " << truthTotal;  // 1.6% (535 of 32,508)
}
