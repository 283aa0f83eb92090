// The whole hot path (ThreadTimelines -> InstanceTimeline -> IngestRecorder -> IngestStats) driven
// by 16 threads at once, with readers taking snapshots all along: the counts must be exact. Run
// under ThreadSanitizer by the test command.
#include "Platform/MonotonicClock.h"
#include "Recording/IngestState.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  Configuration SmallConfiguration()
  {
    Configuration configuration;
    configuration.maxThreads = 64;
    configuration.changeTableSize = 4096;
    configuration.maxPeers = 64;
    configuration.dicomScpTimeoutSeconds = 0;
    return configuration;
  }

  StoredEvent StoredNow(Transport transport, uint64_t key, uint64_t peer)
  {
    StoredEvent event{};
    event.nowNs = MonotonicNowNs();
    event.wallNowNs = WallNowNs();
    event.transport = transport;
    event.storedBytes = 1000;
    event.instanceKey = key;
    // Committed by this store, clearly after it started: the change thread below sends changes for
    // instances not stored yet, which a reception date near the start would take for earlier stores.
    event.receptionSecond = event.wallNowNs / 1000000000 + 2;
    event.peerKey = peer;
    return event;
  }
}


TEST(PipelineConcurrency, SixteenClientsLoseNoInstance)
{
  IngestState pipeline(SmallConfiguration());
  constexpr int kThreads = 16;
  constexpr int kPerThread = 3000;
  std::atomic<bool> stop{false};

  std::thread reader([&] {
    // Everything a /perf/stats request reads, while the clients write. No reset here, so every
    // count only grows, and a later read never shows less than an earlier one.
    StatsQuery byAet;
    byAet.hasGroupBy = true;
    byAet.groupBy = LabelDimension::RemoteAet;
    PluginStatus status;
    uint64_t lastStored = 0;
    uint64_t lastDelivered = 0;
    uint64_t reads = 0;
    while (!stop.load())
    {
      // Every other read as GET /perf/stats without parameters (the readings kept between reads).
      const IngestReport report = pipeline.Collect(reads++ % 2 == 0 ? byAet : StatsQuery(), status);
      const uint64_t stored = report.snapshot.AllTransports().outcomes[static_cast<size_t>(Outcome::Stored)];
      ASSERT_LE(stored, uint64_t(kThreads) * kPerThread);
      ASSERT_GE(stored, lastStored);
      lastStored = stored;
      ASSERT_LE(report.openRecords.count, uint64_t(kThreads));
      for (const PeerAssociations& peer : report.associations.peers)
      {
        ASSERT_LE(peer.inProgress, AssociationTracker::kChainsPerPeer);
      }
      ASSERT_GE(report.changes.newInstancesDelivered, lastDelivered);
      lastDelivered = report.changes.newInstancesDelivered;
      // The groups were merged after the snapshot: they hold at least what it held.
      uint64_t grouped = 0;
      for (const auto& group : report.grouped.groups)
      {
        grouped += group.second.outcomes[static_cast<size_t>(Outcome::Stored)];
      }
      if (!report.grouped.groups.empty())
      {
        ASSERT_GE(grouped, stored);
      }
    }
  });
  std::thread changes([&] {
    // Orthanc's change thread: NewInstance for instances being stored by the others.
    uint64_t key = 1;
    while (!stop.load())
    {
      pipeline.recorder.NewInstanceChange(key, MonotonicNowNs());
      key = key % (uint64_t(kThreads) * kPerThread) + 1;
    }
  });

  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; t++)
  {
    clients.emplace_back([&pipeline, t] {
      const Transport transport = (t % 3 == 0) ? Transport::Dicom : (t % 3 == 1) ? Transport::Rest : Transport::Plugin;
      for (int i = 0; i < kPerThread; i++)
      {
        InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
        if (transport != Transport::Dicom)
        {
          timeline.HttpRequest(MonotonicNowNs(), true, true, transport, pipeline.recorder);
        }
        timeline.Received(MonotonicNowNs(), transport, 1000, i % 100 != 0, nullptr, pipeline.recorder);
        timeline.Filtered(MonotonicNowNs(), transport, pipeline.recorder);
        if (i % 100 == 0)
        {
          continue;  // rejected after the filter: closed by the next event on this thread
        }
        const uint64_t key = uint64_t(t) * kPerThread + i + 1;
        timeline.Stored(StoredNow(transport, key, transport == Transport::Dicom ? 100 + t : 0), pipeline.recorder);
      }
      // The last event closes the last open record.
      pipeline.timelines.ForCurrentThread().HttpRequest(MonotonicNowNs(), false, false, Transport::Rest,
                                                        pipeline.recorder);
    });
  }
  for (std::thread& client : clients)
  {
    client.join();
  }
  stop.store(true);
  reader.join();
  changes.join();

  pipeline.recorder.Drain();  // the stored instances, recorded by the plugin's thread
  while (pipeline.recorder.ClassifyPending() != 0)
  {
    // the failures after the filters, counted by the plugin's thread
  }
  const StatsSnapshot snapshot = pipeline.stats.Snapshot(MonotonicNowNs());
  // What the readers kept between their reads is what a merge of every stream gives once the
  // clients are done: nothing recorded during a read is missing from the next.
  const GroupedSnapshot merged = pipeline.stats.SnapshotGrouped(nullptr, nullptr);
  const WindowSnapshot window = pipeline.stats.SnapshotWindow(Window::FiveMinutes, MonotonicNowNs());
  // The window has every record but those its rings dropped, counted, when one arrived at a slot
  // being cleared (a 10 s slot starting during the run, under 16 writers: seen once under TSan).
  const uint64_t lost = window.droppedAtRotation + window.straddledRotation;
  const auto within = [lost](uint64_t all, uint64_t windowed) { return windowed <= all && all - windowed <= lost; };
  for (size_t t = 0; t < kTransportCount; t++)
  {
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      EXPECT_TRUE(snapshot.transports[t].phases[p] == merged.transports[t].phases[p]) << t << " " << p;
      EXPECT_TRUE(within(merged.transports[t].phases[p].Count(), window.transports[t].phases[p].Count()))
        << t << " " << p << ": " << merged.transports[t].phases[p].Count() << " vs "
        << window.transports[t].phases[p].Count() << ", " << lost << " lost at rotation";
    }
    EXPECT_EQ(merged.transports[t].outcomes, snapshot.transports[t].outcomes);
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      EXPECT_TRUE(within(merged.transports[t].outcomes[o], window.transports[t].outcomes[o])) << t << " " << o;
    }
    EXPECT_EQ(merged.transports[t].counters, snapshot.transports[t].counters);
  }
  uint64_t stored = 0, discarded = 0;
  for (size_t t = 0; t < kTransportCount; t++)
  {
    const TransportSnapshot& transport = snapshot.transports[t];
    stored += transport.outcomes[static_cast<size_t>(Outcome::Stored)];
    discarded += transport.outcomes[static_cast<size_t>(Outcome::Failed)];
    EXPECT_EQ(transport.outcomes[static_cast<size_t>(Outcome::Stored)],
              transport.phases[static_cast<size_t>(Phase::ServerTotal)].Count());
    EXPECT_EQ(0u, transport.outcomes[static_cast<size_t>(Outcome::AlreadyStored)]);
  }
  const uint64_t rejectedPerThread = kPerThread / 100;
  EXPECT_EQ(uint64_t(kThreads) * (kPerThread - rejectedPerThread), stored);
  EXPECT_EQ(uint64_t(kThreads) * rejectedPerThread, discarded);
  EXPECT_EQ(0u, pipeline.timelines.CountOpen().count);
  // Each C-STORE client is its own peer: every instance but the first has a gap, minus the
  // instances following a rejected one... which still pushed nothing. Bounded by the stored count.
  const TransportSnapshot& dicom = snapshot.transports[static_cast<size_t>(Transport::Dicom)];
  EXPECT_GT(dicom.phases[static_cast<size_t>(Phase::AssociationGap)].Count(), 0u);
  EXPECT_LE(dicom.phases[static_cast<size_t>(Phase::AssociationGap)].Count(),
            dicom.outcomes[static_cast<size_t>(Outcome::Stored)]);
}


TEST(PipelineConcurrency, ThreadsThatExitGiveTheirSlotBack)
{
  IngestState pipeline(SmallConfiguration());
  IngestRecorder& recorder = pipeline.recorder;
  for (int round = 0; round < 20; round++)
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < 32; t++)
    {
      threads.emplace_back([&] {
        InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
        timeline.Received(MonotonicNowNs(), Transport::Rest, 10, true, nullptr, recorder);  // left open on exit
      });
    }
    for (std::thread& thread : threads)
    {
      thread.join();
    }
    const OpenRecords open = pipeline.timelines.CountOpen();
    EXPECT_EQ(0u, open.count);  // an exited thread's record is gone with it, not counted forever
    EXPECT_EQ(0u, open.threadsTracked);
  }
  EXPECT_EQ(0u, pipeline.timelines.CountOpen().threadsUntracked);  // 32 < 64 slots: always tracked
}


TEST(PipelineConcurrency, MoreThreadsThanSlotsStillWork)
{
  Configuration configuration = SmallConfiguration();
  configuration.maxThreads = 2;
  IngestState pipeline(configuration);
  ThreadTimelines& timelines = pipeline.timelines;
  IngestRecorder& recorder = pipeline.recorder;
  IngestStats& stats = pipeline.stats;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; t++)
  {
    threads.emplace_back([&, t] {
      InstanceTimeline& timeline = timelines.ForCurrentThread();
      ready++;
      while (!go.load())
      {
      }
      timeline.Received(MonotonicNowNs(), Transport::Rest, 10, true, nullptr, recorder);
      timeline.Filtered(MonotonicNowNs(), Transport::Rest, recorder);
      timeline.Stored(StoredNow(Transport::Rest, 1000 + t, 0), recorder);
    });
  }
  while (ready.load() < 6)
  {
  }
  EXPECT_EQ(4u, timelines.CountOpen().threadsUntracked);
  go.store(true);
  for (std::thread& thread : threads)
  {
    thread.join();
  }
  // REST origin without an HTTP request on the thread: counted as a job.
  recorder.Drain();
  EXPECT_EQ(6u, stats.Snapshot(MonotonicNowNs())
                  .transports[static_cast<size_t>(Transport::Job)]
                  .outcomes[static_cast<size_t>(Outcome::Stored)]);
}
