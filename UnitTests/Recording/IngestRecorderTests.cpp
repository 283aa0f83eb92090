#include "Recording/IngestState.h"
#include "Recording/IngestRecorder.h"
#include "Platform/MonotonicClock.h"

#include <gtest/gtest.h>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;
  constexpr int64_t kEpochNs = 1700000000LL * 1000000000LL;  // wall clock of monotonic 0

  CompletedInstance Http(int64_t start, int64_t received, int64_t filtered, int64_t stored)
  {
    CompletedInstance c{};
    c.transport = Transport::Rest;
    c.hasTimeline = true;
    c.hasReceivePhase = true;
    c.segmentStartNs = start;
    c.receivedNs = received;
    c.filteredNs = filtered;
    c.storedNs = stored;
    c.receivedBytes = 1200;
    c.storedBytes = 1000;
    c.startWallNs = kEpochNs + start;
    c.receptionSecond = (kEpochNs + stored) / 1000000000;  // a new store commits after its start
    c.instanceKey = 42;
    return c;
  }

  Configuration WithOverwrite(bool overwrite)
  {
    Configuration configuration;
    configuration.overwriteInstances = overwrite;
    return configuration;
  }

  // A C-STORE instance from the calling AET "CT" at 10.0.0.1, its labels still to intern.
  CompletedInstance CStore(int64_t start, uint64_t key)
  {
    CompletedInstance c = Http(start, start + kMs, start + 2 * kMs, start + 9 * kMs);
    c.transport = Transport::Dicom;
    c.instanceKey = key;
    c.peerKey = 7;
    c.labels.remoteAet = "CT";
    c.labels.remoteIp = "10.0.0.1";
    c.remoteAet = c.remoteIp = c.calledAet = kUnidentified;
    return c;
  }

  uint64_t DicomStored(IngestState& pipeline)
  {
    return pipeline.stats.Snapshot(0)
      .transports[static_cast<size_t>(Transport::Dicom)]
      .outcomes[static_cast<size_t>(Outcome::Stored)];
  }

  // The recorder's queue drained first, as the plugin's thread or a reader does.
  TransportSnapshot Rest(IngestState& pipeline)
  {
    pipeline.recorder.Drain();
    return pipeline.stats.Snapshot(0).transports[static_cast<size_t>(Transport::Rest)];
  }
}


TEST(Measure, EveryObservedPhaseOnceAndTheOthersNotMeasured)
{
  CompletedInstance instance = Http(100 * kMs, 103 * kMs, 104 * kMs, 120 * kMs);
  instance.transcodeAttempted = true;
  instance.transcodeStartNs = 103 * kMs + 500000;  // delegated: ends at the filter
  instance.firstCreateStartNs = 105 * kMs;
  instance.lastCreateEndNs = 109 * kMs;
  instance.createTotalNs = 3 * kMs;

  const InstanceMeasurement measurement = Measure(instance, -1);
  EXPECT_TRUE(measurement.hasTimeline);
  EXPECT_TRUE(measurement.transcodeAttempted);
  EXPECT_EQ(1200, measurement.receivedBytes);
  EXPECT_EQ(1000u, measurement.storedBytes);
  EXPECT_EQ(3 * kMs, measurement.Phase(Phase::Receive));
  EXPECT_EQ(1 * kMs, measurement.Phase(Phase::PreStore));
  EXPECT_EQ(500000, measurement.Phase(Phase::Transcode));
  EXPECT_EQ(16 * kMs, measurement.Phase(Phase::Persist));
  EXPECT_EQ(1 * kMs, measurement.Phase(Phase::StoragePrepare));
  EXPECT_EQ(3 * kMs, measurement.Phase(Phase::StorageWrite));
  EXPECT_EQ(11 * kMs, measurement.Phase(Phase::IndexUpdate));
  EXPECT_EQ(20 * kMs, measurement.Phase(Phase::ServerTotal));
  EXPECT_EQ(InstanceMeasurement::kNotMeasured, measurement.Phase(Phase::AssociationGap));
  EXPECT_EQ(InstanceMeasurement::kNotMeasured, measurement.Phase(Phase::ChangeDispatch));
}


TEST(Measure, WithoutReceivedInstanceOrTimedStorageThosePhasesAreNotMeasured)
{
  CompletedInstance instance = Http(100 * kMs, 0, 100 * kMs, 108 * kMs);
  instance.transport = Transport::Dicom;
  instance.hasReceivePhase = false;
  const InstanceMeasurement measurement = Measure(instance, 45 * kMs);
  EXPECT_EQ(InstanceMeasurement::kNotMeasured, measurement.receivedBytes);
  for (Phase phase : {Phase::Receive, Phase::PreStore, Phase::Transcode, Phase::StoragePrepare, Phase::StorageWrite,
                      Phase::IndexUpdate})
  {
    EXPECT_EQ(InstanceMeasurement::kNotMeasured, measurement.Phase(phase)) << DefinitionOf(phase).name;
  }
  EXPECT_EQ(8 * kMs, measurement.Phase(Phase::Persist));
  EXPECT_EQ(45 * kMs, measurement.Phase(Phase::AssociationGap));
}


TEST(Measure, OtherPluginsCallbacksAreTheirOwnPhasesAndPersistLiesBetween)
{
  // This plugin's filter at 104, its second one (after the later plugins' filters) at 106; its
  // OnStored at 115, its second one (after the later plugins' OnStored) at 145; the instance's
  // NewInstance change reached OnChange at 112 (the index had committed).
  CompletedInstance instance = Http(100 * kMs, 103 * kMs, 104 * kMs, 145 * kMs);
  instance.filtersPassedNs = 106 * kMs;
  instance.ownStoredNs = 115 * kMs;
  const InstanceMeasurement measurement = Measure(instance, -1, 112 * kMs);
  EXPECT_EQ(2 * kMs, measurement.Phase(Phase::OtherFilters));
  EXPECT_EQ(9 * kMs, measurement.Phase(Phase::Persist));
  EXPECT_EQ(106 * kMs, measurement.PhaseStart(Phase::Persist));
  EXPECT_EQ(3 * kMs, measurement.Phase(Phase::OnStoredWait));
  EXPECT_EQ(30 * kMs, measurement.Phase(Phase::OtherOnStored));
  EXPECT_EQ(45 * kMs, measurement.Phase(Phase::ServerTotal));
  // serverTotal is the sum of the phases right inside it.
  int64_t sum = 0;
  for (size_t p = 0; p < kPhaseCount; p++)
  {
    if (PhasePartOfServerTotal(static_cast<Phase>(p)) && measurement.phaseNs[p] != InstanceMeasurement::kNotMeasured)
    {
      sum += measurement.phaseNs[p];
    }
  }
  EXPECT_EQ(measurement.Phase(Phase::ServerTotal), sum);
  // A change after this plugin's OnStored, or none: no wait measured.
  EXPECT_EQ(InstanceMeasurement::kNotMeasured, Measure(instance, -1, 120 * kMs).Phase(Phase::OnStoredWait));
  EXPECT_EQ(InstanceMeasurement::kNotMeasured, Measure(instance, -1).Phase(Phase::OnStoredWait));
}


TEST(Measure, OnStoredWithoutTimelineGivesOnlyTheSize)
{
  CompletedInstance instance{};
  instance.transport = Transport::Plugin;
  instance.storedNs = 7 * kMs;
  instance.segmentStartNs = 7 * kMs;
  instance.storedBytes = 512;
  instance.receivedNs = 5 * kMs;  // ignored: not on this record's thread
  const InstanceMeasurement measurement = Measure(instance, 3 * kMs);
  EXPECT_FALSE(measurement.hasTimeline);
  EXPECT_EQ(512u, measurement.storedBytes);
  for (size_t p = 0; p < kPhaseCount; p++)
  {
    EXPECT_EQ(InstanceMeasurement::kNotMeasured, measurement.phaseNs[p]) << p;
  }
}


TEST(IngestRecorder, RecordsEachStoredInstanceOnceInItsTransport)
{
  IngestState pipeline(WithOverwrite(false));
  for (int i = 0; i < 3; i++)
  {
    CompletedInstance instance =
      Http(i * 100 * kMs, i * 100 * kMs + kMs, i * 100 * kMs + 2 * kMs, i * 100 * kMs + 9 * kMs);
    instance.instanceKey = 100 + i;
    instance.httpAnswerEncoding = (i == 0) ? 1 : 0;
    pipeline.recorder.InstanceCompleted(instance);
  }
  const TransportSnapshot rest = Rest(pipeline);
  EXPECT_EQ(3u, rest.outcomes[static_cast<size_t>(Outcome::Stored)]);
  EXPECT_EQ(3u, rest.phases[static_cast<size_t>(Phase::ServerTotal)].Count());
  EXPECT_EQ(3u, rest.storedBytes.Count());
  EXPECT_EQ(1u, rest.Count(Counter::AnswersAcceptingCompression));
  EXPECT_EQ(0u, rest.Count(Counter::AnswersWithoutCompression));
  pipeline.recorder.Drain();
  EXPECT_EQ(0u, pipeline.stats.Snapshot(0).transports[static_cast<size_t>(Transport::Dicom)].outcomes[0]);
  EXPECT_EQ(3u, pipeline.changes.Snapshot().storedInstances);
}


TEST(IngestRecorder, AStoreStartedBeforeAResetIsNotCountedAfterItButOrthancsCountGoesOn)
{
  IngestState pipeline(WithOverwrite(false));
  pipeline.Reset();  // now: every instance below started before it
  CompletedInstance instance = Http(100 * kMs, 101 * kMs, 102 * kMs, 109 * kMs);
  pipeline.recorder.InstanceCompleted(instance);
  const TransportSnapshot rest = Rest(pipeline);
  EXPECT_EQ(0u, rest.outcomes[static_cast<size_t>(Outcome::Stored)]);
  EXPECT_EQ(0u, rest.phases[static_cast<size_t>(Phase::ServerTotal)].Count());
  // storedInstancesSinceStart is not zeroed by a reset: it counts every store, as Orthanc does.
  EXPECT_EQ(1u, pipeline.changes.Snapshot().storedInstances);
}


TEST(IngestRecorder, AlreadyStoredWhenReceptionDatePrecedesTheIngestUnlessOverwriting)
{
  for (bool overwrite : {false, true})
  {
    IngestState pipeline(WithOverwrite(overwrite));
    CompletedInstance instance = Http(5000 * kMs, 5001 * kMs, 5002 * kMs, 5010 * kMs);
    instance.receptionSecond = (kEpochNs + 5000 * kMs) / 1000000000 - 60;  // stored a minute earlier
    pipeline.recorder.InstanceCompleted(instance);
    const TransportSnapshot rest = Rest(pipeline);
    EXPECT_EQ(overwrite ? 0u : 1u, rest.outcomes[static_cast<size_t>(Outcome::AlreadyStored)]) << overwrite;
    EXPECT_EQ(overwrite ? 1u : 0u, rest.outcomes[static_cast<size_t>(Outcome::Stored)]) << overwrite;
    EXPECT_EQ(overwrite ? 1u : 0u, rest.phases[static_cast<size_t>(Phase::ServerTotal)].Count()) << overwrite;
  }
}


TEST(IngestRecorder, WhereOrthancAnswersDuplicatesEarlyTheIndexSaysWhichRecordsEndedAtReceivedWere)
{
  // Orthanc 1.13.0: a duplicate ends after ReceivedInstance (a lookup in the index, then its answer).
  const auto dicom = [](IngestState& pipeline, Outcome outcome) {
    pipeline.recorder.Drain();
    return pipeline.stats.Snapshot(0)
      .transports[static_cast<size_t>(Transport::Dicom)]
      .outcomes[static_cast<size_t>(outcome)];
  };
  const ThreadClockReading none;
  for (const bool early : {true, false})
  {
    IngestState pipeline(WithOverwrite(false));
    std::vector<std::string> asked;
    if (early)
    {
      pipeline.recorder.SetInstanceExists([&asked](const char* uid) {
        asked.push_back(uid);
        return std::string(uid) == "1.2.3.1";
      });
    }
    InstanceTimeline timeline;
    // Each instance's record is ended by the thread's next one, on Orthanc's thread: the lookup waits
    // for the plugin's thread.
    timeline.Received(10 * kMs, Transport::Dicom, 100, true, nullptr, pipeline.recorder, nullptr, none, "1.2.3.1");
    timeline.Received(20 * kMs, Transport::Dicom, 100, true, nullptr, pipeline.recorder, nullptr, none, "1.2.3.2");
    timeline.Received(30 * kMs, Transport::Dicom, 100, true, nullptr, pipeline.recorder);  // no UID: failed at once
    timeline.Received(40 * kMs, Transport::Dicom, 100, true, nullptr, pipeline.recorder, nullptr, none, "1.2.3.3");
    EXPECT_TRUE(asked.empty());
    EXPECT_EQ(early ? 1u : 3u, dicom(pipeline, Outcome::Failed)) << early;
    EXPECT_EQ(early ? 2u : 0u, pipeline.recorder.ClassifyPending()) << early;
    EXPECT_EQ(early ? (std::vector<std::string>{"1.2.3.1", "1.2.3.2"}) : std::vector<std::string>(), asked);
    EXPECT_EQ(early ? 1u : 0u, dicom(pipeline, Outcome::AlreadyStored)) << early;
    EXPECT_EQ(early ? 2u : 3u, dicom(pipeline, Outcome::Failed)) << early;
    EXPECT_EQ(0u, pipeline.recorder.FailuresAfterFilters());  // none got past the filters
  }
}


TEST(IngestRecorder, OfTwoRacingStoresOfOneInstanceOneIsStoredAndTheOtherAlreadyStored)
{
  // Sent at the same moment over two connections: both ingests start before either commits, both
  // reach OnStored with the same ReceptionDate second, and Orthanc sends one NewInstance change.
  // Whichever OnStored comes first is counted stored (the counts are exact, not who was first).
  for (bool duplicateFirst : {false, true})
  {
    IngestState pipeline(WithOverwrite(false));
    CompletedInstance original = Http(1000 * kMs, 1001 * kMs, 1002 * kMs, 1010 * kMs);
    CompletedInstance duplicate = Http(1000 * kMs + 500000, 1001 * kMs, 1003 * kMs, 1012 * kMs);
    duplicate.receptionSecond = original.receptionSecond;
    if (duplicateFirst)
    {
      std::swap(original.storedNs, duplicate.storedNs);
      pipeline.recorder.InstanceCompleted(duplicate);
      pipeline.recorder.InstanceCompleted(original);
    }
    else
    {
      pipeline.recorder.InstanceCompleted(original);
      pipeline.recorder.InstanceCompleted(duplicate);
    }
    const TransportSnapshot rest = Rest(pipeline);
    EXPECT_EQ(1u, rest.outcomes[static_cast<size_t>(Outcome::Stored)]) << duplicateFirst;
    EXPECT_EQ(1u, rest.outcomes[static_cast<size_t>(Outcome::AlreadyStored)]) << duplicateFirst;
    EXPECT_EQ(1u, pipeline.changes.Snapshot().NewInstanceBacklog()) << duplicateFirst;
    const int64_t storedNs = pipeline.recorder.NewInstanceChange(42, 1020 * kMs);
    pipeline.changes.ChangeDelivered(3 /* NewInstance */, 1020 * kMs, storedNs);
    EXPECT_EQ(0u, pipeline.changes.Snapshot().NewInstanceBacklog()) << duplicateFirst;
  }
}


TEST(IngestRecorder, AStoreAfterTheEarlierOnesOnStoredIsNotTakenForARace)
{
  // Re-sent after the first store's OnStored, before its change was delivered (then deleted, or
  // not): decided by the ReceptionDate and the change, as before, never by the earlier OnStored.
  IngestState pipeline(WithOverwrite(false));
  pipeline.recorder.InstanceCompleted(Http(1000 * kMs, 1001 * kMs, 1002 * kMs, 1010 * kMs));
  CompletedInstance later = Http(2500 * kMs, 2501 * kMs, 2502 * kMs, 2510 * kMs);
  pipeline.recorder.InstanceCompleted(later);
  EXPECT_EQ(2u, Rest(pipeline).outcomes[static_cast<size_t>(Outcome::Stored)]);
}


TEST(IngestRecorder, FileRemovedAfterTheWriteIsAlreadyStoredEvenWhenOverwriting)
{
  IngestState pipeline(WithOverwrite(true));
  CompletedInstance instance = Http(0, kMs, 2 * kMs, 9 * kMs);
  instance.removedAfterCreate = true;
  pipeline.recorder.InstanceCompleted(instance);
  EXPECT_EQ(1u, Rest(pipeline).outcomes[static_cast<size_t>(Outcome::AlreadyStored)]);
  EXPECT_EQ(0u, Rest(pipeline).outcomes[static_cast<size_t>(Outcome::Stored)]);
}


TEST(IngestRecorder, AnotherSyntaxWithoutOurTranscoderIsCountedAsTranscodedWithoutHook)
{
  IngestState pipeline(WithOverwrite(true));
  CompletedInstance changed = Http(0, kMs, 2 * kMs, 9 * kMs);
  changed.labels.receivedSyntax = "1.2.840.10008.1.2.1";
  changed.labels.storedSyntax = "1.2.840.10008.1.2.4.70";
  pipeline.recorder.InstanceCompleted(changed);
  CompletedInstance ours = changed;
  ours.instanceKey = 43;
  ours.transcodeAttempted = true;
  ours.transcodeStartNs = kMs;
  pipeline.recorder.InstanceCompleted(ours);
  const TransportSnapshot rest = Rest(pipeline);
  EXPECT_EQ(1u, rest.Count(Counter::TranscodedWithoutHook));
  EXPECT_EQ(1u, rest.Count(Counter::TranscodeAttempts));
}


TEST(IngestRecorder, NewInstanceChangePairsWithItsStoreOnceInTheStoresStream)
{
  IngestState pipeline(WithOverwrite(true));
  pipeline.recorder.InstanceCompleted(Http(0, kMs, 2 * kMs, 9 * kMs));
  EXPECT_EQ(9 * kMs, pipeline.recorder.NewInstanceChange(42, 12 * kMs));
  EXPECT_EQ(0, pipeline.recorder.NewInstanceChange(77, 13 * kMs));  // never stored here
  const HistogramSnapshot dispatch = Rest(pipeline).phases[static_cast<size_t>(Phase::ChangeDispatch)];
  EXPECT_EQ(1u, dispatch.Count());
  EXPECT_EQ(3 * kMs, dispatch.Max());
}


namespace
{
  ThreadClockReading Clocks(int64_t cpuNs, int64_t runDelayNs)
  {
    ThreadClockReading reading;
    reading.cpuNs = cpuNs;
    reading.runDelayNs = runDelayNs;
    return reading;
  }
}


TEST(Measure, ASampledInstancesPhasesAreSplitAndTheirPartsAddUpToEachDuration)
{
  CompletedInstance instance = Http(100 * kMs, 103 * kMs, 104 * kMs, 120 * kMs);
  instance.requestGapNs = 7 * kMs;
  InstanceClocks& clocks = instance.clocks;
  clocks.sampled = true;
  clocks.segmentStartNs = 100 * kMs;
  clocks.segmentStart = Clocks(10 * kMs, 5 * kMs);
  clocks.received = Clocks(11 * kMs, 6 * kMs);           // receive: 1 on a CPU, 1 waiting, 1 blocked
  clocks.filtered = Clocks(11 * kMs + 800000, 6 * kMs);  // preStore: 0.8 on a CPU, 0.2 blocked
  clocks.stored = Clocks(13 * kMs, 14 * kMs);            // persist: 1.2 on a CPU, 8 waiting, 6.8 blocked
  clocks.previousStoredNs = 93 * kMs;                    // the gap starts at the thread's previous OnStored
  clocks.previousStored = Clocks(9 * kMs, 5 * kMs);      // gap: 1 on a CPU, 0 waiting, 6 blocked

  const InstanceMeasurement m = Measure(instance, -1);
  EXPECT_EQ(1 * kMs, m.CpuNs(Phase::Receive));
  EXPECT_EQ(1 * kMs, m.RunDelayNs(Phase::Receive));
  EXPECT_EQ(1 * kMs, m.BlockedNs(Phase::Receive));
  EXPECT_EQ(800000, m.CpuNs(Phase::PreStore));
  EXPECT_EQ(0, m.RunDelayNs(Phase::PreStore));
  EXPECT_EQ(200000, m.BlockedNs(Phase::PreStore));
  EXPECT_EQ(1200000, m.CpuNs(Phase::Persist));
  EXPECT_EQ(8 * kMs, m.RunDelayNs(Phase::Persist));
  EXPECT_EQ(6800000, m.BlockedNs(Phase::Persist));
  EXPECT_EQ(3 * kMs, m.CpuNs(Phase::ServerTotal));
  EXPECT_EQ(9 * kMs, m.RunDelayNs(Phase::ServerTotal));
  EXPECT_EQ(8 * kMs, m.BlockedNs(Phase::ServerTotal));
  EXPECT_EQ(7 * kMs, m.Phase(Phase::RequestGap));
  EXPECT_EQ(93 * kMs, m.PhaseStart(Phase::RequestGap));
  EXPECT_EQ(1 * kMs, m.CpuNs(Phase::RequestGap));
  EXPECT_EQ(0, m.RunDelayNs(Phase::RequestGap));
  EXPECT_EQ(6 * kMs, m.BlockedNs(Phase::RequestGap));
  for (const Phase phase : {Phase::Receive, Phase::PreStore, Phase::Persist, Phase::ServerTotal, Phase::RequestGap})
  {
    EXPECT_EQ(m.Phase(phase), m.CpuNs(phase) + m.RunDelayNs(phase) + m.BlockedNs(phase));
  }
  EXPECT_FALSE(m.HasParts(Phase::StorageWrite));  // not timed
  EXPECT_FALSE(m.HasParts(Phase::AssociationGap));
}


TEST(Measure, PartsStayWithinTheirPhaseAndAreLeftOutWhereTheClocksAreNotTheInstances)
{
  CompletedInstance instance = Http(100 * kMs, 103 * kMs, 104 * kMs, 120 * kMs);
  InstanceClocks& clocks = instance.clocks;
  clocks.sampled = true;
  clocks.segmentStartNs = 90 * kMs;  // read at another time than this instance's start
  clocks.segmentStart = Clocks(0, 0);
  clocks.received = Clocks(5 * kMs, 0);
  clocks.filtered = Clocks(7 * kMs, 3 * kMs);                     // more CPU and wait than the 1 ms preStore
  clocks.stored = Clocks(8 * kMs, ThreadClockReading::kUnknown);  // no run delay at the end

  const InstanceMeasurement m = Measure(instance, -1);
  EXPECT_FALSE(m.HasParts(Phase::Receive));
  EXPECT_FALSE(m.HasParts(Phase::ServerTotal));
  EXPECT_EQ(1 * kMs, m.CpuNs(Phase::PreStore));  // clamped to the duration
  EXPECT_EQ(0, m.RunDelayNs(Phase::PreStore));
  EXPECT_EQ(0, m.BlockedNs(Phase::PreStore));
  EXPECT_EQ(1 * kMs, m.CpuNs(Phase::Persist));
  EXPECT_EQ(InstanceMeasurement::kNotMeasured, m.RunDelayNs(Phase::Persist));
  EXPECT_EQ(15 * kMs, m.BlockedNs(Phase::Persist));  // includes the unknown wait

  // Not sampled: nothing split.
  instance.clocks.sampled = false;
  EXPECT_FALSE(Measure(instance, -1).HasParts(Phase::PreStore));
}


TEST(IngestRecorder, TheSplitPartsAreSummedPerStreamAndTheirQuantilesKeptPerTransport)
{
  IngestState pipeline(WithOverwrite(false));
  for (int i = 0; i < 4; i++)
  {
    CompletedInstance instance =
      Http((100 + 10 * i) * kMs, (102 + 10 * i) * kMs, (103 + 10 * i) * kMs, (109 + 10 * i) * kMs);
    instance.instanceKey = 100 + i;
    instance.receptionSecond = -1;
    if (i % 2 == 0)
    {
      instance.clocks.sampled = true;
      instance.clocks.segmentStartNs = instance.segmentStartNs;
      instance.clocks.segmentStart = Clocks(0, 0);
      instance.clocks.received = Clocks(0, 0);
      instance.clocks.filtered = Clocks(0, 0);
      instance.clocks.stored = Clocks(2 * kMs, 3 * kMs);  // persist 6 ms: 2 on a CPU, 3 waiting, 1 blocked
    }
    pipeline.recorder.InstanceCompleted(instance);
  }
  pipeline.recorder.Drain();
  const StatsSnapshot snapshot = pipeline.stats.Snapshot(0);
  const TransportSnapshot& rest = snapshot.transports[static_cast<size_t>(Transport::Rest)];
  const PhasePartsSnapshot& persist = rest.PartsOf(Phase::Persist);
  const PhasePartQuantiles& quantiles = snapshot.PartQuantilesOf(Transport::Rest)[static_cast<size_t>(Phase::Persist)];
  EXPECT_EQ(4u, rest.phases[static_cast<size_t>(Phase::Persist)].Count());
  EXPECT_EQ(2u, persist.sampled);
  EXPECT_EQ(2u, persist.runDelaySampled);
  EXPECT_EQ(uint64_t(12 * kMs), persist.durationNs);
  EXPECT_EQ(uint64_t(4 * kMs), persist.cpuNs);
  EXPECT_EQ(uint64_t(6 * kMs), persist.runDelayNs);
  EXPECT_EQ(uint64_t(2 * kMs), persist.BlockedNs());
  EXPECT_EQ(2u, quantiles.onCpu.Count());
  EXPECT_EQ(2u, quantiles.waitingForCpu.Count());
  EXPECT_EQ(2u, quantiles.blocked.Count());
  EXPECT_NEAR(2 * kMs, quantiles.onCpu.ValueAtQuantile(0.5), 2 * kMs / 8);  // a coarse bucket
  pipeline.Reset();
  pipeline.recorder.Drain();
  const StatsSnapshot after = pipeline.stats.Snapshot(0);
  EXPECT_EQ(0u, after.transports[static_cast<size_t>(Transport::Rest)].PartsOf(Phase::Persist).sampled);
  EXPECT_EQ(0u, after.PartQuantilesOf(Transport::Rest)[static_cast<size_t>(Phase::Persist)].onCpu.Count());
}


TEST(IngestRecorder, AReaderDoesNotNameAnInstanceBeforeTheCheckItsFilterAskedFor)
{
  // A sender's association on connection 100 is over and its next one, on 101, sends its first
  // instance; the plugin's thread has not yet checked the connections that instance's filter asked
  // for, so the table still holds 100 open. A reader that drained then took the instance for the
  // association before (1 and 5 instances for 3 and 3): it waits for the check now.
  IngestState pipeline(WithOverwrite(false));
  pipeline.recorder.SetHoldAtMost(3600 * 1000 * kMs);  // whatever the machine's pauses
  const int64_t base = MonotonicNowNs();
  bool checked = true;
  pipeline.checkedSince = [&checked](int64_t) { return checked; };
  const LabelId ip = pipeline.labels.InternValue(LabelDimension::RemoteIp, "10.0.0.1");
  std::vector<DicomConnections::Reading> open{{100, 100, ip}};
  pipeline.connections.Update(open.data(), open.size(), base + 1 * kMs);
  const auto store = [&pipeline, base](int i) {
    pipeline.recorder.InstanceCompleted(CStore(base + i * 10 * kMs, 200 + i));
  };
  const auto dicomStored = [&pipeline] { return DicomStored(pipeline); };
  for (int i = 1; i <= 3; i++)
  {
    store(i);
  }
  pipeline.recorder.Drain();
  EXPECT_EQ(3u, dicomStored());

  checked = false;  // connection 100 closed; 101 opened; the check is asked for, not run yet
  store(4);
  store(5);
  EXPECT_EQ(0u, pipeline.recorder.Drain());
  EXPECT_EQ(base + 49 * kMs, pipeline.recorder.HeldStoredNs());
  EXPECT_EQ(3u, dicomStored());

  // The plugin's thread: the check sees 100 gone, reads 101, drains.
  EXPECT_EQ(1u, pipeline.connections.CheckOpen(base + 45 * kMs, [](int) { return uint64_t(0); }));
  open = {{101, 101, ip}};
  pipeline.connections.Update(open.data(), open.size(), base + 45 * kMs);
  checked = true;
  EXPECT_EQ(2u, pipeline.recorder.Drain());
  EXPECT_EQ(0, pipeline.recorder.HeldStoredNs());
  store(6);
  pipeline.recorder.Drain();
  EXPECT_EQ(6u, dicomStored());
  open.clear();
  pipeline.connections.Update(open.data(), open.size(), base + 70 * kMs);
  const std::vector<PeerAssociations> rows = pipeline.associations.Snapshot(base + 80 * kMs);
  ASSERT_EQ(1u, rows.size());
  EXPECT_EQ(2u, rows[0].finished);
  EXPECT_EQ(2u, rows[0].byConnection);
  EXPECT_EQ(3, rows[0].instancesPerAssociation.Min());
  EXPECT_EQ(3, rows[0].instancesPerAssociation.Max());
}


TEST(IngestRecorder, AnInstanceHeldForItsCheckIsNamedAfterASecondOrByAReaderThatGaveUp)
{
  IngestState pipeline(WithOverwrite(false));
  pipeline.checkedSince = [](int64_t) { return false; };  // a check never run
  const auto stored = [&pipeline](uint64_t key, int64_t storedNs) {
    CompletedInstance instance = CStore(0, key);
    instance.storedNs = storedNs;
    pipeline.recorder.InstanceCompleted(instance);
  };
  const auto dicomStored = [&pipeline] { return DicomStored(pipeline); };
  // Stored before a reader asked: it waits for the check, then names it as the table is.
  stored(1, MonotonicNowNs());
  const int64_t before = MonotonicNowNs();
  pipeline.DrainForReader();
  EXPECT_GE(MonotonicNowNs() - before, IngestState::kReaderWaitNs);
  EXPECT_EQ(1u, dicomStored());
  EXPECT_EQ(0, pipeline.recorder.HeldStoredNs());
  // Stored after it asked (here: dated later): left to the plugin's thread, no wait.
  stored(2, MonotonicNowNs() + 100 * kMs);
  const int64_t after = MonotonicNowNs();
  pipeline.DrainForReader();
  EXPECT_LT(MonotonicNowNs() - after, IngestState::kReaderWaitNs);
  EXPECT_NE(0, pipeline.recorder.HeldStoredNs());
  EXPECT_EQ(1u, dicomStored());
  EXPECT_EQ(1u, pipeline.recorder.Drain(true));
  EXPECT_EQ(2u, dicomStored());
  // The plugin's thread, a second after it was stored: named as the table is.
  stored(3, MonotonicNowNs() - 2000 * kMs);
  EXPECT_EQ(1u, pipeline.recorder.Drain());
  EXPECT_EQ(3u, dicomStored());
}
