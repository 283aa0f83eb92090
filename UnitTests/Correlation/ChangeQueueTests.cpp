#include "Correlation/ChangeQueueStats.h"

#include <gtest/gtest.h>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;
  constexpr uint32_t kNewInstance = 3, kNewPatient = 4, kNewSeries = 5, kNewStudy = 6, kStableSeries = 8;
}


TEST(ChangeQueueStats, BacklogLagAndServiceInterval)
{
  ChangeQueueStats stats;
  // Three instances stored; the change thread is behind.
  stats.InstanceStored(90 * kMs);
  stats.InstanceStored(91 * kMs);
  stats.InstanceStored(92 * kMs);
  EXPECT_EQ(3u, stats.Snapshot().NewInstanceBacklog());

  stats.ChangeDelivered(kNewInstance, 100 * kMs, 90 * kMs);  // first instance, stored at 90
  stats.ChangeDelivered(kNewSeries, 150 * kMs, 0);           // its series: waited 60 ms
  stats.ChangeDelivered(kNewStudy, 200 * kMs, 0);
  stats.ChangeDelivered(kNewPatient, 250 * kMs, 0);
  stats.ChangeDelivered(kNewInstance, 300 * kMs, 0);  // delivered before its OnStored
  stats.ChangeDelivered(kNewSeries, 310 * kMs, 0);    // not timed
  stats.ChangeDelivered(kStableSeries, 320 * kMs, 0);

  const ChangeQueueSnapshot snapshot = stats.Snapshot();
  EXPECT_EQ(1u, snapshot.NewInstanceBacklog());
  EXPECT_EQ(2u, snapshot.delivered[kNewInstance]);
  EXPECT_EQ(2u, snapshot.delivered[kNewSeries]);
  EXPECT_EQ(1u, snapshot.delivered[kStableSeries]);
  EXPECT_EQ(60 * kMs, snapshot.newSeriesLag.Max());
  EXPECT_EQ(1u, snapshot.newSeriesLag.Count());
  EXPECT_EQ(110 * kMs, snapshot.newStudyLag.Max());
  EXPECT_EQ(160 * kMs, snapshot.newPatientLag.Max());
  EXPECT_EQ(1u, snapshot.followedEarlyNewInstance);
  // Between the two NewInstance deliveries, the third instance was still waiting: 200 ms of
  // change-thread time for the first instance.
  EXPECT_EQ(1u, snapshot.perInstanceWhileBacklogged.Count());
  EXPECT_EQ(200 * kMs, snapshot.perInstanceWhileBacklogged.Max());
  EXPECT_STREQ("StableSeries", ChangeTypeName(kStableSeries));
  EXPECT_STREQ("other", ChangeTypeName(1234));
}


TEST(ChangeQueueStats, NoIntervalWhenTheQueueIsEmpty)
{
  ChangeQueueStats stats;
  stats.InstanceStored(5 * kMs);
  stats.ChangeDelivered(kNewInstance, 10 * kMs, 5 * kMs);  // caught up
  stats.InstanceStored(4990 * kMs);
  stats.ChangeDelivered(kNewInstance, 5000 * kMs, 4990 * kMs);  // idle in between: not service time
  EXPECT_EQ(0u, stats.Snapshot().perInstanceWhileBacklogged.Count());
  EXPECT_EQ(0u, stats.Snapshot().NewInstanceBacklog());
  stats.ChangeDelivered(1234, 5001 * kMs, 0);
  stats.ResetStatistics();
  // The changes delivered count from the reset (POST /perf/reset: every figure counts only what
  // came after it); the backlog's counters are since start, and a change after the reset counts.
  EXPECT_EQ(0u, stats.Snapshot().delivered[kNewInstance]);
  EXPECT_EQ(0u, stats.Snapshot().otherTypes);
  EXPECT_EQ(2u, stats.Snapshot().newInstancesDelivered);
  EXPECT_EQ(2u, stats.Snapshot().storedInstances);
  stats.InstanceStored(5990 * kMs);
  EXPECT_EQ(1u, stats.Snapshot().NewInstanceBacklog());
  stats.ChangeDelivered(kNewInstance, 6000 * kMs, 5990 * kMs);
  EXPECT_EQ(1u, stats.Snapshot().delivered[kNewInstance]);
  EXPECT_EQ(0u, stats.Snapshot().NewInstanceBacklog());
}


TEST(ChangeQueueStats, TheLatestInstancesChangeClearsAMiscountedBacklog)
{
  ChangeQueueStats stats;
  // Two instances counted stored whose change never comes (e.g. a duplicate taken for a new store).
  stats.InstanceStored(10 * kMs);
  stats.InstanceStored(11 * kMs);
  stats.InstanceStored(12 * kMs);
  stats.ChangeDelivered(kNewInstance, 15 * kMs, 10 * kMs);
  EXPECT_EQ(2u, stats.Snapshot().NewInstanceBacklog());
  // The change of the latest stored instance: Orthanc's queue is first in, first out, so nothing
  // stored before it is still waiting.
  stats.ChangeDelivered(kNewInstance, 16 * kMs, 12 * kMs);
  EXPECT_EQ(0u, stats.Snapshot().NewInstanceBacklog());
  EXPECT_EQ(2u, stats.Snapshot().newInstancesDelivered);  // what was delivered, as delivered
  // A change delivered before its OnStored, then the store: waiting for nothing, yet counted one
  // behind until the next latest change; never negative.
  stats.ChangeDelivered(kNewInstance, 20 * kMs, 0);
  stats.InstanceStored(21 * kMs);
  EXPECT_EQ(0u, stats.Snapshot().NewInstanceBacklog());
  stats.InstanceStored(30 * kMs);
  EXPECT_EQ(1u, stats.Snapshot().NewInstanceBacklog());
  stats.ChangeDelivered(kNewInstance, 31 * kMs, 30 * kMs);
  EXPECT_EQ(0u, stats.Snapshot().NewInstanceBacklog());
}
