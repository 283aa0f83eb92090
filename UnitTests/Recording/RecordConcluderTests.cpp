// RecordConcluder: which records it concludes, from what the plugin's thread reads of Orthanc's
// connections (given here), and what the recorder then counts.
#include "Platform/HttpConnectionIdentity.h"
#include "Recording/IngestState.h"
#include "Recording/RecordConcluder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;
  constexpr uint16_t kDicomPort = 4242;
  constexpr uint16_t kHttpPort = 8042;

  Configuration SmallConfiguration()
  {
    Configuration configuration;
    configuration.maxThreads = 8;
    configuration.changeTableSize = 64;
    configuration.maxPeers = 8;
    configuration.dicomPort = kDicomPort;
    configuration.httpPort = kHttpPort;
    return configuration;
  }

  // Threads of this test, each with one event sequence run on it, then parked: Orthanc's threads,
  // whose records the plugin's thread (the test) concludes.
  class Threads
  {
  public:
    explicit Threads(IngestState& pipeline) :
      concluder_(pipeline.timelines, pipeline.recorder, pipeline.connections),
      pipeline_(pipeline)
    {
    }

    ~Threads()
    {
      release_ = true;
      for (std::thread& thread : threads_)
      {
        thread.join();
      }
    }

    template <typename Events>
    void Run(Events events)
    {
      std::atomic<bool> ran{false};
      threads_.emplace_back([&, events] {
        events(pipeline_.timelines.ForCurrentThread());
        ran = true;
        while (!release_)
        {
          std::this_thread::yield();
        }
      });
      while (!ran)
      {
        std::this_thread::yield();
      }
    }

    // A pass of the plugin's thread: conclude, then count the failures after the filters.
    size_t Conclude(int64_t nowNs, const std::vector<SocketInfo>& http = {})
    {
      const size_t concluded = concluder_.ConcludeEnded(nowNs, http);
      pipeline_.recorder.ClassifyPending();
      return concluded;
    }

  private:
    RecordConcluder concluder_;
    IngestState& pipeline_;
    std::vector<std::thread> threads_;
    std::atomic<bool> release_{false};
  };

  SocketInfo HttpSocket(const char* peer, uint16_t peerPort, uint32_t msSinceSent = 100000,
                        uint32_t msSinceReceived = 100000)
  {
    SocketInfo socket;
    socket.localPort = kHttpPort;
    socket.state = kTcpEstablished;
    snprintf(socket.peer, sizeof(socket.peer), "%s", peer);
    socket.peerPort = peerPort;
    socket.msSinceDataSent = msSinceSent;
    socket.msSinceDataReceived = msSinceReceived;
    return socket;
  }

  HttpConnection Connection(const char* peer, uint16_t port)
  {
    return HttpConnection{port == 0 ? 0 : HttpConnectionIdentity::KeyOf(peer, port),
                          HttpConnectionIdentity::AddressKey(peer)};
  }

  uint64_t Outcomes(IngestState& pipeline, Transport transport, Outcome outcome)
  {
    return pipeline.stats.Snapshot(0).transports[static_cast<size_t>(transport)].outcomes[static_cast<size_t>(outcome)];
  }

  uint64_t Failures(IngestState& pipeline, Transport transport, FailureReason reason)
  {
    return pipeline.stats.Snapshot(0).transports[static_cast<size_t>(transport)].Failures(reason);
  }
}


TEST(RecordConcluder, ACStoreEndsOnceEveryAssociationThatMayHaveCarriedItHasClosed)
{
  IngestState pipeline(SmallConfiguration());
  const LabelId ct = pipeline.labels.InternValue(LabelDimension::RemoteAet, "CT1");
  const LabelId mr = pipeline.labels.InternValue(LabelDimension::RemoteAet, "MR1");
  const LabelId addressA = pipeline.labels.InternValue(LabelDimension::RemoteIp, "10.0.0.1");
  const LabelId addressB = pipeline.labels.InternValue(LabelDimension::RemoteIp, "10.0.0.2");
  // Two associations open before the instances came (a reading at 5 ms), each with a calling AET seen.
  const DicomConnections::Reading both[] = {{101, 7, addressA}, {102, 8, addressB}};
  pipeline.connections.Update(both, 2, 5 * kMs);
  pipeline.connections.SetRemoteAet(101, ct);
  pipeline.connections.SetRemoteAet(102, mr);

  Threads threads(pipeline);
  threads.Run([&](InstanceTimeline& t) {
    t.Received(10 * kMs, Transport::Dicom, 500, true, nullptr, pipeline.recorder);  // refused before the filter
  });
  threads.Run([&](InstanceTimeline& t) {
    t.Filtered(11 * kMs, Transport::Dicom, pipeline.recorder);  // then the write failed
    t.Identified(ct, kUnidentified, kUnidentified, 1);
  });
  threads.Run([&](InstanceTimeline& t) {
    t.Filtered(11 * kMs, Transport::Dicom, pipeline.recorder);  // a slow disk: still in write()
    t.Identified(mr, kUnidentified, kUnidentified, 2);
  });
  threads.Run([&](InstanceTimeline& t) {
    t.Filtered(1 * kMs, Transport::Dicom, pipeline.recorder);
    StoredEvent stored{};
    stored.nowNs = 5 * kMs;
    stored.transport = Transport::Dicom;
    stored.receptionSecond = -1;
    t.Stored(stored, pipeline.recorder);  // an idle worker of the pool, its instance stored
  });

  // Too young: nothing judged yet; then, both associations open, every record may be in progress.
  EXPECT_EQ(0u, threads.Conclude(10 * kMs + RecordConcluder::kMinAgeNs / 2));
  pipeline.connections.Update(both, 2, 1000 * kMs);
  EXPECT_EQ(0u, threads.Conclude(2000 * kMs));

  // CT1's association closed, and a new one opened since (after the reading at 1 s, from CT1's
  // address too): CT1's failed write is over; the record with no AET may still be on MR1's.
  const DicomConnections::Reading later[] = {{102, 8, addressB}, {103, 9, addressA}};
  pipeline.connections.Update(later, 2, 2500 * kMs);
  EXPECT_EQ(1u, threads.Conclude(3000 * kMs));
  EXPECT_EQ(1u, Outcomes(pipeline, Transport::Dicom, Outcome::Failed));
  EXPECT_EQ(1u, Failures(pipeline, Transport::Dicom, FailureReason::AfterFilters));

  // MR1's association stays open: its store is in progress, however old (its age tells a hung store).
  EXPECT_EQ(0u, threads.Conclude(60000 * kMs));
  EXPECT_EQ(2u, pipeline.Collect(StatsQuery(), PluginStatus()).openRecords.count);

  // It closes: the two others are over.
  const DicomConnections::Reading last[] = {{103, 9, addressA}};
  pipeline.connections.Update(last, 1, 61000 * kMs);
  EXPECT_EQ(2u, threads.Conclude(61500 * kMs));
  EXPECT_EQ(3u, Outcomes(pipeline, Transport::Dicom, Outcome::Failed));
  EXPECT_EQ(1u, Failures(pipeline, Transport::Dicom, FailureReason::BeforeFilters));
  EXPECT_EQ(2u, Failures(pipeline, Transport::Dicom, FailureReason::AfterFilters));
  EXPECT_EQ(0u, pipeline.Collect(StatsQuery(), PluginStatus()).openRecords.count);
  EXPECT_EQ(0u, threads.Conclude(62000 * kMs));  // once

  // The failures are labelled with the AET the instance filter saw.
  bool sawCt1 = false;
  bool sawUnknown = false;
  for (const auto& stream : pipeline.stats.SnapshotFailingStreams())
  {
    const std::string aet =
      pipeline.labels.Name(LabelDimension::RemoteAet, stream.first.Get(LabelDimension::RemoteAet));
    sawCt1 = sawCt1 || aet == "CT1";
    sawUnknown = sawUnknown || aet == "(unknown)";
  }
  EXPECT_TRUE(sawCt1);
  EXPECT_TRUE(sawUnknown);
}


TEST(RecordConcluder, AnUploadEndsOnceItsConnectionAnsweredOrClosed)
{
  IngestState pipeline(SmallConfiguration());
  Threads threads(pipeline);
  const auto upload = [&](HttpConnection connection) {
    return [&pipeline, connection](InstanceTimeline& t) {
      t.HttpRequest(10 * kMs, true, true, Transport::Rest, pipeline.recorder, false, kUnidentified, connection);
    };
  };
  threads.Run(upload(Connection("127.0.0.1", 50001)));  // still sending its body
  threads.Run(upload(Connection("127.0.0.1", 50002)));  // answered 400, its connection kept alive
  threads.Run(upload(Connection("127.0.0.1", 50003)));  // its client went away
  threads.Run(upload(Connection("10.0.0.9", 0)));       // no port known: its address still connected
  threads.Run(upload(Connection("10.0.0.8", 0)));       // no port known, nothing left from its address
  const std::vector<SocketInfo> sockets = {
    HttpSocket("127.0.0.1", 50001, 1985, 10),   // "100 Continue" at the start, body received 10 ms ago
    HttpSocket("127.0.0.1", 50002, 100, 1500),  // sent after it last received: its answer
    HttpSocket("10.0.0.9", 41000),
  };
  EXPECT_EQ(3u, threads.Conclude(2000 * kMs, sockets));
  EXPECT_EQ(3u, Outcomes(pipeline, Transport::Rest, Outcome::RequestWithoutInstance));
  EXPECT_EQ(2u, pipeline.Collect(StatsQuery(), PluginStatus()).openRecords.receivingCount);
}


TEST(RecordConcluder, AStoreInsideARequestEndsWithItsAnswerAJobsOnlyAtItsThreadsNextInstance)
{
  IngestState pipeline(SmallConfiguration());
  Threads threads(pipeline);
  threads.Run([&](InstanceTimeline& t) {
    t.HttpRequest(10 * kMs, true, true, Transport::Rest, pipeline.recorder, false, kUnidentified,
                  Connection("127.0.0.1", 50010));
    t.Received(11 * kMs, Transport::Rest, 500, true, nullptr, pipeline.recorder);  // then it failed
  });
  threads.Run([&](InstanceTimeline& t) {
    t.Filtered(11 * kMs, Transport::Rest, pipeline.recorder);  // a job's store (no HTTP request)
  });
  EXPECT_EQ(0u, threads.Conclude(2000 * kMs, {HttpSocket("127.0.0.1", 50010, 1995, 1989)}));  // not answered yet
  EXPECT_EQ(1u, threads.Conclude(3000 * kMs, {HttpSocket("127.0.0.1", 50010, 900, 1989)}));
  EXPECT_EQ(1u, Outcomes(pipeline, Transport::Rest, Outcome::Failed));
  EXPECT_EQ(0u, threads.Conclude(100000 * kMs));  // no connection tells a job's end
  EXPECT_EQ(1u, pipeline.Collect(StatsQuery(), PluginStatus()).openRecords.count);
}


TEST(OutcomeOf, FromTheStageReachedAndWhatTheStorageSaw)
{
  FailureReason reason;
  EndedRecord record;
  record.stage = RecordStage::Receiving;
  EXPECT_EQ(Outcome::RequestWithoutInstance, OutcomeOf(record, false, StorageState::Ok, reason));
  record.stage = RecordStage::Received;
  EXPECT_EQ(Outcome::Failed, OutcomeOf(record, false, StorageState::DiskFull, reason));
  EXPECT_EQ(FailureReason::BeforeFilters, reason);  // the disk is not why it failed before the write
  record.hasPart10Header = false;
  EXPECT_EQ(Outcome::NotDicom, OutcomeOf(record, false, StorageState::Ok, reason));
  record.stage = RecordStage::Filtered;
  EXPECT_EQ(Outcome::Failed, OutcomeOf(record, false, StorageState::Ok, reason));
  EXPECT_EQ(FailureReason::AfterFilters, reason);
  EXPECT_EQ(Outcome::Failed, OutcomeOf(record, false, StorageState::DiskFull, reason));
  EXPECT_EQ(FailureReason::DiskFull, reason);
  EXPECT_EQ(Outcome::Failed, OutcomeOf(record, false, StorageState::QuotaPossible, reason));
  EXPECT_EQ(FailureReason::Quota, reason);
  // With timed storage, what it saw.
  EXPECT_EQ(Outcome::Rejected, OutcomeOf(record, true, StorageState::Ok, reason));
  record.storage = kStorageCreateFailed;
  EXPECT_EQ(Outcome::Failed, OutcomeOf(record, true, StorageState::Ok, reason));
  EXPECT_EQ(FailureReason::StorageWrite, reason);
  record.storage = kStorageCreated | kStorageRemoved;
  EXPECT_EQ(Outcome::Failed, OutcomeOf(record, true, StorageState::Ok, reason));
  EXPECT_EQ(FailureReason::Index, reason);
}
