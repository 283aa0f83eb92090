// RecordConcluder: which records it concludes, from what their threads are doing (injected), and
// what the recorder then counts.
#include "Recording/IngestState.h"
#include "Recording/RecordConcluder.h"

#include <gtest/gtest.h>

#include <sys/syscall.h>

#include <atomic>
#include <map>
#include <thread>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;
  constexpr uint16_t kDicomPort = 4242;
  constexpr uint16_t kHttpPort = 8042;
  constexpr uint64_t kPoolWait = 0x5600;   // the futex the DICOM workers wait on when idle
  constexpr uint64_t kIndexLock = 0x7700;  // a lock inside the store

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

  ThreadActivity Blocked(long number, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a3 = 0)
  {
    ThreadActivity activity;
    activity.kind = ThreadActivity::Kind::Blocked;
    activity.number = number;
    activity.arguments[0] = a0;
    activity.arguments[1] = a1;
    activity.arguments[3] = a3;
    return activity;
  }

  ThreadActivity FutexWait(uint64_t address, bool timed)
  {
    return Blocked(SYS_futex, address, 0x89, timed ? 0x7ff0 : 0);
  }

  ThreadActivity Reading(int fd)
  {
    return Blocked(SYS_recvfrom, static_cast<uint64_t>(fd));
  }

  // Threads of this test, each with one event sequence run on it, then parked; what each one is
  // doing now is what the test says (the concluder's probe).
  class Threads
  {
  public:
    explicit Threads(IngestState& pipeline) :
      concluder_(pipeline.timelines, pipeline.recorder, kDicomPort, kHttpPort, Probes()),
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
    uint32_t Run(Events events)
    {
      std::atomic<uint32_t> number{0};
      threads_.emplace_back([&, events] {
        events(pipeline_.timelines.ForCurrentThread());
        number = CurrentThreadNumber();
        while (!release_)
        {
          std::this_thread::yield();
        }
      });
      while (number == 0)
      {
        std::this_thread::yield();
      }
      return number;
    }

    std::map<uint32_t, ThreadActivity> activities;
    std::map<int, SocketInfo> sockets;
    int64_t restInProgress = -1;
    // A pass of the plugin's thread: conclude, then count the failures after the filters.
    size_t Conclude(int64_t nowNs)
    {
      const size_t concluded = concluder_.ConcludeEnded(nowNs);
      pipeline_.recorder.ClassifyPending();
      return concluded;
    }

  private:
    RecordConcluder::Probes Probes()
    {
      RecordConcluder::Probes probes;
      probes.activity = [this](uint32_t thread) {
        const auto found = activities.find(thread);
        return found != activities.end() ? found->second : ThreadActivity();
      };
      probes.socket = [this](int fd, SocketInfo& socket) {
        const auto found = sockets.find(fd);
        if (found == sockets.end())
        {
          return false;
        }
        socket = found->second;
        return true;
      };
      probes.restRequestsInProgress = [this] { return restInProgress; };
      probes.threads = [this] {
        std::vector<uint32_t> all;
        for (const auto& thread : activities)
        {
          all.push_back(thread.first);
        }
        return all;
      };
      return probes;
    }

    RecordConcluder concluder_;
    IngestState& pipeline_;
    std::vector<std::thread> threads_;
    std::atomic<bool> release_{false};
  };

  SocketInfo Socket(uint16_t port, uint32_t msSinceSent = 100000, uint32_t msSinceReceived = 100000)
  {
    SocketInfo socket;
    socket.localPort = port;
    socket.state = kTcpEstablished;
    socket.msSinceDataSent = msSinceSent;
    socket.msSinceDataReceived = msSinceReceived;
    return socket;
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


TEST(RecordConcluder, ARefusedCStoreEndsWhenItsThreadServesAConnectionOrIdlesInItsPool)
{
  IngestState pipeline(SmallConfiguration());
  Threads threads(pipeline);
  const uint32_t refused = threads.Run([&](InstanceTimeline& t) {
    t.Received(10 * kMs, Transport::Dicom, 500, true, nullptr, pipeline.recorder);  // no SeriesInstanceUID
  });
  const uint32_t failedWrite = threads.Run([&](InstanceTimeline& t) {
    t.Received(10 * kMs, Transport::Dicom, 500, true, nullptr, pipeline.recorder);
    t.Identified(pipeline.labels.InternValue(LabelDimension::RemoteAet, "CT1"), kUnidentified, kUnidentified, 1);
    t.Filtered(11 * kMs, Transport::Dicom, true, pipeline.recorder);  // then the write failed
  });
  const uint32_t writing = threads.Run([&](InstanceTimeline& t) {
    t.Received(10 * kMs, Transport::Dicom, 500, true, nullptr, pipeline.recorder);
    t.Filtered(11 * kMs, Transport::Dicom, true, pipeline.recorder);  // a slow disk: still in write()
  });
  const uint32_t locked = threads.Run([&](InstanceTimeline& t) {
    t.Received(10 * kMs, Transport::Dicom, 500, true, nullptr, pipeline.recorder);
    t.Filtered(11 * kMs, Transport::Dicom, true, pipeline.recorder);  // waiting for the index's lock
  });
  const uint32_t idle = threads.Run([&](InstanceTimeline& t) {
    t.Received(1 * kMs, Transport::Dicom, 500, true, nullptr, pipeline.recorder);
    t.Filtered(2 * kMs, Transport::Dicom, true, pipeline.recorder);
    StoredEvent stored{};
    stored.nowNs = 5 * kMs;
    stored.transport = Transport::Dicom;
    stored.receptionSecond = -1;
    t.Stored(stored, pipeline.recorder);  // an idle worker of the pool, its instance stored
  });
  threads.sockets[7] = Socket(kDicomPort);
  threads.activities[refused] = Reading(7);  // the association's next command
  threads.activities[failedWrite] = FutexWait(kPoolWait, true);
  threads.activities[writing] = Blocked(SYS_write, 12);  // a file, not a socket of Orthanc's ports
  threads.activities[locked] = FutexWait(kIndexLock, false);
  threads.activities[idle] = FutexWait(kPoolWait, true);
  threads.activities[900001] = FutexWait(kIndexLock, false);  // a reader of the index, waiting too
  threads.activities[900002] = FutexWait(kIndexLock, false);

  // Too young: nothing judged yet.
  EXPECT_EQ(0u, threads.Conclude(10 * kMs + RecordConcluder::kMinAgeNs / 2));
  // The socket proves it at once; one idle fellow on the pool's wait is not enough.
  EXPECT_EQ(1u, threads.Conclude(2000 * kMs));
  EXPECT_EQ(1u, Outcomes(pipeline, Transport::Dicom, Outcome::Failed));
  EXPECT_EQ(1u, Failures(pipeline, Transport::Dicom, FailureReason::BeforeFilters));
  EXPECT_EQ(0u, threads.Conclude(3000 * kMs));
  // The pool's other workers, with no slot of their own (they never ingested): two fellows now,
  // seen at two passes in a row.
  threads.activities[900003] = FutexWait(kPoolWait, true);
  EXPECT_EQ(0u, threads.Conclude(4000 * kMs));
  EXPECT_EQ(1u, threads.Conclude(5000 * kMs));
  EXPECT_EQ(2u, Outcomes(pipeline, Transport::Dicom, Outcome::Failed));
  EXPECT_EQ(1u, Failures(pipeline, Transport::Dicom, FailureReason::AfterFilters));
  // Stores in progress stay open, however old: their age tells a hung store. A lock others wait on
  // too is no pool's wait (untimed), and a record waiting on it is a store in progress.
  EXPECT_EQ(0u, threads.Conclude(60000 * kMs));
  EXPECT_EQ(0u, threads.Conclude(61000 * kMs));
  const IngestReport report = pipeline.Collect(StatsQuery(), PluginStatus());
  EXPECT_EQ(2u, report.openRecords.count);
  // The failure is labelled with the AET the C-STORE filter saw.
  const std::vector<std::pair<InstanceLabels, TransportSnapshot>> failing = pipeline.stats.SnapshotFailingStreams();
  bool sawCt1 = false;
  bool sawUnknown = false;
  for (const auto& stream : failing)
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
  const auto upload = [&](InstanceTimeline& t) {
    t.HttpRequest(10 * kMs, true, true, Transport::Rest, pipeline.recorder);
  };
  const uint32_t slow = threads.Run(upload);      // still sending its body
  const uint32_t answered = threads.Run(upload);  // answered 400, waiting for the next request
  const uint32_t gone = threads.Run(upload);      // its client went away: the thread idles
  const uint32_t peerA = threads.Run([](InstanceTimeline&) {});
  const uint32_t peerB = threads.Run([](InstanceTimeline&) {});
  threads.sockets[20] = Socket(kHttpPort, 1900, 10);   // received 10 ms ago, sent at the start
  threads.sockets[21] = Socket(kHttpPort, 100, 1500);  // sent after it last received
  threads.activities[slow] = Reading(20);
  threads.activities[answered] = Blocked(SYS_poll, 0);  // poll's descriptors unreadable here
  threads.activities[answered] = Reading(21);
  threads.activities[gone] = FutexWait(0x9900, false);
  threads.activities[peerA] = FutexWait(0x9900, false);  // civetweb's idle workers
  threads.activities[peerB] = FutexWait(0x9900, false);
  EXPECT_EQ(2u, threads.Conclude(2000 * kMs));
  EXPECT_EQ(2u, Outcomes(pipeline, Transport::Rest, Outcome::RequestWithoutInstance));
  EXPECT_EQ(1u, pipeline.Collect(StatsQuery(), PluginStatus()).openRecords.receivingCount);
}


TEST(RecordConcluder, ARestApiStoreEndsWhenOrthancHasNoRequestInProgress)
{
  IngestState pipeline(SmallConfiguration());
  Threads threads(pipeline);
  const uint32_t failed = threads.Run([&](InstanceTimeline& t) {
    t.HttpRequest(10 * kMs, true, true, Transport::Rest, pipeline.recorder);
    t.Received(11 * kMs, Transport::Rest, 500, true, nullptr, pipeline.recorder);
  });
  threads.activities[failed] = ThreadActivity();  // not readable: only Orthanc's count tells
  threads.restInProgress = 1;
  EXPECT_EQ(0u, threads.Conclude(2000 * kMs));
  threads.restInProgress = 0;
  EXPECT_EQ(1u, threads.Conclude(2000 * kMs));
  EXPECT_EQ(1u, Outcomes(pipeline, Transport::Rest, Outcome::Failed));
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
  EXPECT_EQ(Outcome::Failed, OutcomeOf(record, false, StorageState::QuotaReached, reason));
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
