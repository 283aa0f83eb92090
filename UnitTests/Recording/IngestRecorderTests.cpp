#include "Recording/IngestState.h"
#include "Recording/IngestRecorder.h"

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

  TransportSnapshot Rest(const IngestState& pipeline)
  {
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
