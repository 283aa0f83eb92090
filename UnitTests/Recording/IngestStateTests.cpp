// IngestState::Collect: what a reader gets of records that Orthanc's hooks leave open.
#include "Platform/MonotonicClock.h"
#include "Recording/IngestState.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  Configuration SmallConfiguration()
  {
    Configuration configuration;
    configuration.maxThreads = 8;
    configuration.changeTableSize = 64;
    configuration.maxPeers = 8;
    return configuration;
  }

  uint64_t RestOutcome(const IngestReport& report, Outcome outcome)
  {
    return report.snapshot.transports[static_cast<size_t>(Transport::Rest)].outcomes[static_cast<size_t>(outcome)];
  }

  // Runs `events` on a thread of its own, which then waits, keeping its timeline, until released.
  class ParkedThread
  {
  public:
    template <typename Events>
    explicit ParkedThread(Events events)
    {
      thread_ = std::thread([this, events] {
        events();
        ready_.store(true);
        while (!release_.load())
        {
          std::this_thread::yield();
        }
      });
      while (!ready_.load())
      {
        std::this_thread::yield();
      }
    }
    ~ParkedThread()
    {
      release_.store(true);
      thread_.join();
    }

  private:
    std::atomic<bool> ready_{false};
    std::atomic<bool> release_{false};
    std::thread thread_;
  };
}


TEST(IngestState, OpenRecordsAreStoresInProgressAndUploadsApart)
{
  IngestState pipeline(SmallConfiguration());
  PluginStatus status;
  const int64_t start = MonotonicNowNs();
  // A body Orthanc is parsing, on an HTTP thread.
  ParkedThread parsing([&] {
    InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
    timeline.HttpRequest(start, true, true, Transport::Rest, pipeline.recorder);
    timeline.Received(start + 1, Transport::Rest, 7, true, nullptr, pipeline.recorder);
  });
  // A C-STORE instance between its callbacks.
  ParkedThread cstore([&] {
    pipeline.timelines.ForCurrentThread().Received(start + 2, Transport::Dicom, 7, true, nullptr, pipeline.recorder);
  });
  // An upload whose body has not arrived yet.
  ParkedThread uploading([&] {
    pipeline.timelines.ForCurrentThread().HttpRequest(start + 3, true, true, Transport::Rest, pipeline.recorder);
  });

  const IngestReport report = pipeline.Collect(StatsQuery(), status);
  EXPECT_EQ(2u, report.openRecords.count);
  EXPECT_EQ(start, report.openRecords.oldestStartNs);
  EXPECT_EQ(1u, report.openRecords.receivingCount);
  EXPECT_EQ(start + 3, report.openRecords.receivingOldestStartNs);
  EXPECT_EQ(0u, report.openRecords.startedBeforeReset);
  EXPECT_EQ(3u, report.openRecords.threadsTracked);

  // After a reset, they are counted apart, and never in an outcome.
  pipeline.Reset();
  const IngestReport afterReset = pipeline.Collect(StatsQuery(), status);
  EXPECT_EQ(0u, afterReset.openRecords.count);
  EXPECT_EQ(0u, afterReset.openRecords.receivingCount);
  EXPECT_EQ(3u, afterReset.openRecords.startedBeforeReset);
}


TEST(IngestState, WhatStartedBeforeAResetIsNotCountedAfterIt)
{
  IngestState pipeline(SmallConfiguration());
  PluginStatus status;
  InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
  const int64_t start = MonotonicNowNs();
  timeline.HttpRequest(start, true, true, Transport::Rest, pipeline.recorder);
  timeline.Received(start + 1, Transport::Rest, 7, false, nullptr, pipeline.recorder);
  pipeline.Reset();
  // Its thread moves on: the body that was not DICOM started before the reset.
  timeline.HttpRequest(MonotonicNowNs(), false, false, Transport::Rest, pipeline.recorder);
  const IngestReport report = pipeline.Collect(StatsQuery(), status);
  EXPECT_EQ(0u, RestOutcome(report, Outcome::NotDicom));
  EXPECT_EQ(0u, report.openRecords.count);
  EXPECT_EQ(0u, report.openRecords.startedBeforeReset);
}


TEST(IngestState, AnOutcomeRecordedByItsThreadIsNotCountedTwice)
{
  IngestState pipeline(SmallConfiguration());
  PluginStatus status;
  const int64_t start = MonotonicNowNs();
  ParkedThread thread([&] {
    InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
    timeline.HttpRequest(start, true, true, Transport::Rest, pipeline.recorder);
    timeline.Received(start + 1, Transport::Rest, 7, false, nullptr, pipeline.recorder);
    timeline.HttpRequest(start + 2, false, false, Transport::Rest, pipeline.recorder);  // its next request
  });
  const IngestReport report = pipeline.Collect(StatsQuery(), status);
  EXPECT_EQ(1u, RestOutcome(report, Outcome::NotDicom));
  EXPECT_EQ(0u, report.openRecords.count);
  EXPECT_EQ(0u, pipeline.concluder.ConcludeEnded(MonotonicNowNs() + 10 * RecordConcluder::kMinAgeNs, {}));
  EXPECT_EQ(1u, RestOutcome(pipeline.Collect(StatsQuery(), status), Outcome::NotDicom));
}


// An ageing keeps the values used in the last minute: those of requests that ended without an
// instance too (a client whose uploads all fail is named across it, as one whose uploads are stored).
TEST(IngestState, AClientWhoseUploadsAllFailedLatelyKeepsItsNameAcrossAnAgeing)
{
  IngestState pipeline(SmallConfiguration());
  PluginStatus status;
  const LabelId failing = pipeline.labels.InternValue(LabelDimension::RemoteIp, "10.0.0.9");
  const LabelId gone = pipeline.labels.InternValue(LabelDimension::RemoteIp, "10.0.0.10");  // nothing since
  InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
  const int64_t start = MonotonicNowNs();
  timeline.HttpRequest(start, true, true, Transport::Rest, pipeline.recorder, false, failing);
  timeline.Received(start + 1, Transport::Rest, 7, false, nullptr, pipeline.recorder);
  timeline.HttpRequest(start + 2, false, false, Transport::Rest, pipeline.recorder);  // its next request
  EXPECT_EQ(1u, RestOutcome(pipeline.Collect(StatsQuery(), status), Outcome::NotDicom));
  const uint32_t before = pipeline.labels.Generation();
  pipeline.recorder.AgeLabels(start);  // the values used since the request started stay
  // Named in the tables as they are now, before anything is interned again.
  EXPECT_EQ("10.0.0.9", pipeline.labels.Name(LabelDimension::RemoteIp, failing));
  EXPECT_NE("10.0.0.10", pipeline.labels.Name(LabelDimension::RemoteIp, gone));
  EXPECT_EQ("10.0.0.10", pipeline.labels.Name(LabelDimension::RemoteIp, gone, before));  // of the tables before
  EXPECT_EQ(failing, pipeline.labels.InternValue(LabelDimension::RemoteIp, "10.0.0.9"));
}


// The recorder keeps each instance's whole timeline in the recent ring, once, with its Orthanc ID
// and thread; /perf/slowest ranks the stored ones that match, and a reset empties it.
TEST(IngestState, RecentInstancesFromTheRecorderToCollectSlowest)
{
  Configuration configuration = SmallConfiguration();
  configuration.recentInstances = 16;
  IngestState pipeline(configuration);
  InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
  const int64_t start = MonotonicNowNs();
  const std::string ids[] = {"aaaaaaaa-11111111-22222222-33333333-44444444",
                             "bbbbbbbb-11111111-22222222-33333333-44444444"};
  for (int i = 0; i < 2; i++)
  {
    const int64_t t0 = start + i * 100000000;
    timeline.HttpRequest(t0, true, true, Transport::Rest, pipeline.recorder);
    timeline.Received(t0 + 1000, Transport::Rest, 100, true, "1.2.840.10008.1.2.1", pipeline.recorder);
    timeline.Filtered(t0 + 3000, Transport::Rest, pipeline.recorder);
    StoredEvent event{};
    event.nowNs = t0 + 10000 + i * 5000;  // the second one is slower
    event.wallNowNs = WallNowNs();
    event.transport = Transport::Rest;
    event.storedBytes = 100;
    event.instanceKey = 1 + i;
    event.receptionSecond = -1;
    event.instanceId = ids[i].c_str();
    timeline.Stored(event, pipeline.recorder);
  }

  RecentQuery query;
  RecentReport report = pipeline.CollectSlowest(query);
  ASSERT_EQ(2u, report.ring.instances.size());
  const RecentInstance& slowest = report.ring.instances[0];
  EXPECT_EQ(ids[1], slowest.instanceId);
  EXPECT_EQ(Outcome::Stored, slowest.outcome);
  EXPECT_EQ(CurrentThreadNumber(), slowest.thread);
  EXPECT_EQ(15000, slowest.measurement.Phase(Phase::ServerTotal));
  EXPECT_EQ(1000, slowest.measurement.Phase(Phase::Receive));
  EXPECT_EQ(start + 100000000 + 1000, slowest.measurement.PhaseStart(Phase::PreStore));
  EXPECT_EQ(start + 100000000 + 3000, slowest.measurement.PhaseStart(Phase::Persist));

  query.filter.scope = StatsQuery::Scope::Single;
  query.filter.transport = Transport::Dicom;
  EXPECT_TRUE(pipeline.CollectSlowest(query).ring.instances.empty());

  pipeline.Reset();
  EXPECT_TRUE(pipeline.CollectRecent(60).ring.instances.empty());
}
