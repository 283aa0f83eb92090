#include "AssociationTracker.h"

#include <gtest/gtest.h>

using IngestPerf::AssociationTracker;

namespace
{
  constexpr int64_t kMs = 1000000;
  constexpr int64_t kTimeout = 30000 * kMs;
}

TEST(AssociationTracker, OneAssociationGivesEveryGapButTheFirst)
{
  AssociationTracker tracker(256, kTimeout);
  int64_t received = 0;
  int64_t stored = 0;
  for (int i = 0; i < 10; i++)
  {
    received = stored + 45 * kMs;  // the Nagle wait between two instances
    const int64_t gap = tracker.InstanceStored(7, received, received + 5 * kMs);
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
  tracker.InstanceStored(1, 100 * kMs, 110 * kMs);
  tracker.InstanceStored(2, 105 * kMs, 120 * kMs);
  EXPECT_EQ(10 * kMs, tracker.InstanceStored(2, 130 * kMs, 140 * kMs));
  EXPECT_EQ(40 * kMs, tracker.InstanceStored(1, 150 * kMs, 160 * kMs));
}


TEST(AssociationTracker, SimultaneousAssociationsKeepCountAndMean)
{
  AssociationTracker tracker(256, kTimeout);
  // Two associations from one AET, interleaved, each with its own gap (10 ms and 30 ms).
  tracker.InstanceStored(9, 0, 5 * kMs);                             // A1 ends at 5
  tracker.InstanceStored(9, 1 * kMs, 6 * kMs);                       // B1 ends at 6
  const int64_t g1 = tracker.InstanceStored(9, 15 * kMs, 20 * kMs);  // A2 arrives at 15 (gap 10)
  const int64_t g2 = tracker.InstanceStored(9, 36 * kMs, 40 * kMs);  // B2 arrives at 36 (gap 30)
  ASSERT_GE(g1, 0);
  ASSERT_GE(g2, 0);
  EXPECT_EQ(40 * kMs, g1 + g2);
}


TEST(AssociationTracker, AnInstanceThatArrivedBeforeEveryEndHasNoGap)
{
  AssociationTracker tracker(256, kTimeout);
  tracker.InstanceStored(3, 0, 50 * kMs);
  // Received at 20 ms, i.e. during the previous instance: a second association's first instance.
  EXPECT_EQ(-1, tracker.InstanceStored(3, 20 * kMs, 60 * kMs));
}


TEST(AssociationTracker, EndsOlderThanTheScpTimeoutAreDropped)
{
  AssociationTracker tracker(256, kTimeout);
  tracker.InstanceStored(4, 0, 10 * kMs);
  EXPECT_EQ(-1, tracker.InstanceStored(4, 10 * kMs + kTimeout + 1, 10 * kMs + kTimeout + 5));
  // Without a timeout (DicomScpTimeout = 0), no end expires.
  AssociationTracker unlimited(256, 0);
  unlimited.InstanceStored(4, 0, 10 * kMs);
  EXPECT_EQ(kTimeout * 2, unlimited.InstanceStored(4, 10 * kMs + 2 * kTimeout, 3 * kTimeout));
}


TEST(AssociationTracker, UnknownReceiveTimeOnlyRemembersTheEnd)
{
  AssociationTracker tracker(256, kTimeout);
  EXPECT_EQ(-1, tracker.InstanceStored(5, 0, 10 * kMs));
  EXPECT_EQ(5 * kMs, tracker.InstanceStored(5, 15 * kMs, 20 * kMs));
}


TEST(AssociationTracker, MemoryIsBoundedPerPeer)
{
  AssociationTracker tracker(1, kTimeout);
  for (int i = 0; i < 1000; i++)
  {
    tracker.InstanceStored(6, 0, (i + 1) * kMs);  // received at 0: never paired, only pushed
  }
  // Only the newest kEndsPerPeer ends are kept: the oldest kept ended at 985 ms.
  EXPECT_EQ((2000 - 985) * kMs, tracker.InstanceStored(6, 2000 * kMs, 2001 * kMs));
}
