#include "Timeline/InstanceTimeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;
  constexpr int64_t kWallBase = int64_t(1790000000) * 1000000000;  // some second in 2026

  class RecordingSink : public TimelineSink
  {
  public:
    std::vector<CompletedInstance> completed;
    std::vector<EndedRecord> abandoned;

    void InstanceCompleted(const CompletedInstance& instance) override { completed.push_back(instance); }
    void RecordEnded(const EndedRecord& record) override { abandoned.push_back(record); }
  };

  StoredEvent Stored(int64_t nowNs, Transport transport, uint64_t key = 42, uint64_t peer = 0)
  {
    StoredEvent event{};
    event.nowNs = nowNs;
    event.wallNowNs = kWallBase + nowNs;
    event.transport = transport;
    event.storedBytes = 1000;
    event.instanceKey = key;
    event.receptionSecond = -1;
    event.peerKey = peer;
    return event;
  }
}


TEST(InstanceTimeline, HttpInstancePhasesAddUpToTheTotal)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.HttpRequest(100 * kMs, true, true, Transport::Rest, sink);
  EXPECT_EQ(100 * kMs, timeline.OpenSinceNs());
  timeline.Received(103 * kMs, Transport::Rest, 5000, true, nullptr, sink);
  timeline.Filtered(104 * kMs, Transport::Rest, sink);
  timeline.Stored(Stored(110 * kMs, Transport::Rest), sink);

  ASSERT_EQ(1u, sink.completed.size());
  EXPECT_TRUE(sink.abandoned.empty());
  const CompletedInstance& c = sink.completed[0];
  EXPECT_TRUE(c.hasTimeline);
  EXPECT_TRUE(c.hasReceivePhase);
  EXPECT_EQ(100 * kMs, c.segmentStartNs);
  EXPECT_EQ(3 * kMs, c.receivedNs - c.segmentStartNs);
  EXPECT_EQ(1 * kMs, c.filteredNs - c.receivedNs);
  EXPECT_EQ(6 * kMs, c.storedNs - c.filteredNs);
  EXPECT_EQ(5000u, c.receivedBytes);
  EXPECT_EQ(1000u, c.storedBytes);
  EXPECT_EQ(kWallBase + 100 * kMs, c.startWallNs);
  EXPECT_EQ(0, timeline.OpenSinceNs());

  // The finished request is not "in flight", and the next request does not count it again.
  timeline.HttpRequest(200 * kMs, false, false, Transport::Rest, sink);
  EXPECT_TRUE(sink.abandoned.empty());
  EXPECT_EQ(0, timeline.OpenSinceNs());
}


TEST(InstanceTimeline, CStoreInstanceHasNoReceivePhaseAndKeepsThePeer)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.Received(10 * kMs, Transport::Dicom, 500, true, nullptr, sink);
  timeline.Filtered(12 * kMs, Transport::Dicom, sink);
  timeline.Stored(Stored(20 * kMs, Transport::Dicom, 1, 77), sink);
  ASSERT_EQ(1u, sink.completed.size());
  const CompletedInstance& c = sink.completed[0];
  EXPECT_FALSE(c.hasReceivePhase);
  EXPECT_EQ(10 * kMs, c.segmentStartNs);
  EXPECT_EQ(12 * kMs, c.filteredNs);  // persist starts at the plugin's filter
  EXPECT_EQ(10 * kMs, c.ArrivalNs());
  EXPECT_EQ(77u, c.peerKey);
  EXPECT_TRUE(sink.abandoned.empty());
}


TEST(InstanceTimeline, MultipartRequestChainsInstances)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.HttpRequest(0, true, true, Transport::Plugin, sink);
  for (int i = 0; i < 3; i++)
  {
    const int64_t base = (10 + 10 * i) * kMs;
    timeline.Received(base, Transport::Plugin, 10, true, nullptr, sink);
    timeline.Filtered(base + kMs, Transport::Plugin, sink);
    timeline.Stored(Stored(base + 5 * kMs, Transport::Plugin, 100 + i), sink);
  }
  ASSERT_EQ(3u, sink.completed.size());
  EXPECT_EQ(0, sink.completed[0].segmentStartNs);
  // Each next part starts where the previous one was stored: no time is counted twice.
  EXPECT_EQ(sink.completed[0].storedNs, sink.completed[1].segmentStartNs);
  EXPECT_EQ(sink.completed[1].storedNs, sink.completed[2].segmentStartNs);
  for (const CompletedInstance& c : sink.completed)
  {
    EXPECT_TRUE(c.hasReceivePhase);
  }
  timeline.HttpRequest(100 * kMs, false, false, Transport::Rest, sink);
  EXPECT_TRUE(sink.abandoned.empty());
}


TEST(InstanceTimeline, OpenRecordSaysHowFarItGot)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  EXPECT_EQ(0u, timeline.Open().handle);
  timeline.HttpRequest(kMs, true, true, Transport::Rest, sink, false, 9, HttpConnection{77, 78});
  // Uploading the body: no instance yet.
  OpenRecordView open = timeline.Open();
  EXPECT_EQ(kMs, open.sinceNs);
  EXPECT_EQ(RecordStage::Receiving, open.stage);
  EXPECT_EQ(77u, open.http.key);  // its connection, for the plugin's thread
  EXPECT_EQ(78u, open.http.address);
  EXPECT_EQ(9, open.ended.remoteIp);
  const uint64_t request = open.handle;

  timeline.Received(2 * kMs, Transport::Rest, 5, false, nullptr, sink);
  open = timeline.Open();
  EXPECT_EQ(kMs, open.sinceNs);
  EXPECT_EQ(RecordStage::Received, open.stage);
  EXPECT_EQ(77u, open.http.key);  // a store inside the request ends with it
  EXPECT_FALSE(open.ended.hasPart10Header);
  EXPECT_EQ(request >> 16, open.handle >> 16);  // the same record, further on
  EXPECT_NE(request, open.handle);

  timeline.HttpRequest(3 * kMs, true, true, Transport::Rest, sink);
  timeline.Received(4 * kMs, Transport::Rest, 5000, true, "1.2.840.10008.1.2.1", sink);
  EXPECT_EQ(RecordStage::Received, timeline.Open().stage);
  timeline.Filtered(5 * kMs, Transport::Rest, sink);
  EXPECT_EQ(RecordStage::Filtered, timeline.Open().stage);
  EXPECT_EQ(Transport::Rest, timeline.Open().transport);

  StoredEvent stored{};
  stored.nowNs = 6 * kMs;
  stored.wallNowNs = kWallBase;
  stored.transport = Transport::Rest;
  timeline.Stored(stored, sink);
  EXPECT_EQ(0u, timeline.Open().handle);
  EXPECT_EQ(0, timeline.OpenSinceNs());
}


TEST(InstanceTimeline, OnlyRecordsInsideAnHttpRequestHaveAConnection)
{
  RecordingSink sink;
  InstanceTimeline dicom;  // a C-STORE association: its thread goes on with the next instance
  dicom.Received(kMs, Transport::Dicom, 5, false, nullptr, sink);
  EXPECT_NE(0u, dicom.Open().handle);
  EXPECT_EQ(0u, dicom.Open().http.address);

  InstanceTimeline job;  // REST origin outside any HTTP request: one of Orthanc's jobs
  job.Received(kMs, Transport::Rest, 5, true, nullptr, sink);
  EXPECT_EQ(0u, job.Open().http.address);
  EXPECT_EQ(Transport::Job, job.Open().transport);

  InstanceTimeline stow;  // a plugin's route (STOW-RS): its parts are stored inside the request
  stow.HttpRequest(kMs, true, true, Transport::Plugin, sink, false, kUnidentified, HttpConnection{0, 5});
  EXPECT_EQ(Transport::Plugin, stow.Open().transport);
  stow.Received(2 * kMs, Transport::Plugin, 5, true, nullptr, sink);
  EXPECT_EQ(5u, stow.Open().http.address);
  EXPECT_EQ(0u, stow.Open().http.key);  // its port not known: the address alone
}


TEST(InstanceTimeline, ARecordConcludedElsewhereEndsOnce)
{
  RecordingSink sink;
  InstanceTimeline timeline;
  timeline.Received(kMs, Transport::Dicom, 5, true, nullptr, sink);
  timeline.Identified(4, 5, 6, 77);
  const OpenRecordView view = timeline.Open();
  EXPECT_EQ(4, view.ended.remoteAet);
  EXPECT_EQ(5, view.ended.remoteIp);
  EXPECT_EQ(6, view.ended.calledAet);
  ASSERT_TRUE(timeline.Conclude(view));
  EXPECT_FALSE(timeline.Conclude(view));  // once
  EXPECT_EQ(0u, timeline.Open().handle);  // no longer open for readers
  EXPECT_EQ(0, timeline.OpenSinceNs());
  timeline.Received(2 * kMs, Transport::Dicom, 5, true, nullptr, sink);  // the thread's next instance
  EXPECT_TRUE(sink.abandoned.empty());                                   // not counted again
  EXPECT_EQ(kUnidentified, timeline.Open().ended.remoteAet);             // nothing of the last one left

  // A view of an earlier stage is refused: the record moved on since it was read.
  const OpenRecordView received = timeline.Open();
  timeline.Filtered(3 * kMs, Transport::Dicom, sink);
  EXPECT_FALSE(timeline.Conclude(received));
  // A wrong conclusion: OnStored comes after all. The instance is counted, and the error said.
  ASSERT_TRUE(timeline.Conclude(timeline.Open()));
  timeline.Stored(Stored(4 * kMs, Transport::Dicom), sink);
  ASSERT_EQ(1u, sink.completed.size());
  EXPECT_TRUE(sink.completed[0].concludedEarly);
  EXPECT_TRUE(sink.abandoned.empty());
}


TEST(InstanceTimeline, NonDicomBodyIsCountedWhenTheThreadMovesOn)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.HttpRequest(kMs, true, true, Transport::Rest, sink);
  timeline.Received(2 * kMs, Transport::Rest, 5, false, nullptr, sink);
  EXPECT_EQ(kMs, timeline.OpenSinceNs());  // still open: no hook tells the request ended
  EXPECT_TRUE(sink.abandoned.empty());

  timeline.HttpRequest(50 * kMs, false, false, Transport::Rest, sink);  // e.g. GET /perf/stats
  ASSERT_EQ(1u, sink.abandoned.size());
  EXPECT_FALSE(sink.abandoned[0].hasPart10Header);
  EXPECT_EQ(RecordStage::Received, sink.abandoned[0].stage);
  EXPECT_EQ(Transport::Rest, sink.abandoned[0].transport);
  EXPECT_EQ(0, timeline.OpenSinceNs());
  EXPECT_TRUE(sink.completed.empty());
}


TEST(InstanceTimeline, OutcomeDependsOnTheLastStageReached)
{
  RecordingSink sink;
  {
    InstanceTimeline timeline;
    timeline.Received(0, Transport::Dicom, 5000, true, nullptr, sink);
    timeline.Received(10 * kMs, Transport::Dicom, 5000, true, nullptr, sink);  // the next one arrives
  }
  {
    InstanceTimeline timeline;
    timeline.Received(0, Transport::Dicom, 5000, true, nullptr, sink);
    timeline.Filtered(kMs, Transport::Dicom, sink);
    timeline.Received(10 * kMs, Transport::Dicom, 5000, true, nullptr, sink);
  }
  {
    InstanceTimeline timeline;
    timeline.HttpRequest(0, true, true, Transport::Rest, sink);  // e.g. empty body
    timeline.HttpRequest(kMs, true, false, Transport::Rest, sink);
  }
  {
    InstanceTimeline timeline;
    timeline.HttpRequest(0, true, false, Transport::Rest, sink);  // POST /tools/find: not ingest
    timeline.HttpRequest(kMs, false, false, Transport::Rest, sink);
  }
  ASSERT_EQ(3u, sink.abandoned.size());
  EXPECT_EQ(RecordStage::Received, sink.abandoned[0].stage);
  EXPECT_EQ(RecordStage::Filtered, sink.abandoned[1].stage);
  EXPECT_EQ(RecordStage::Receiving, sink.abandoned[2].stage);
  EXPECT_EQ(Transport::Dicom, sink.abandoned[0].transport);
  EXPECT_EQ(0, sink.abandoned[0].sinceNs);
  EXPECT_EQ(10 * kMs, sink.abandoned[0].endedNs);
  EXPECT_FALSE(sink.abandoned[0].concluded);
}


TEST(InstanceTimeline, AStaleRecordNeverCorruptsTheNextOne)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.Received(0, Transport::Rest, 99, true, nullptr, sink);
  timeline.Filtered(kMs, Transport::Rest, sink);
  // never stored; the next instance on this thread:
  timeline.Received(100 * kMs, Transport::Dicom, 7, true, nullptr, sink);
  timeline.Filtered(101 * kMs, Transport::Dicom, sink);
  timeline.Stored(Stored(105 * kMs, Transport::Dicom), sink);
  ASSERT_EQ(1u, sink.abandoned.size());
  ASSERT_EQ(1u, sink.completed.size());
  const CompletedInstance& c = sink.completed[0];
  EXPECT_EQ(100 * kMs, c.segmentStartNs);
  EXPECT_EQ(100 * kMs, c.receivedNs);
  EXPECT_EQ(7u, c.receivedBytes);
  EXPECT_FALSE(c.transcodeAttempted);
}


TEST(InstanceTimeline, AbandonedInstanceInsideARequestBreaksTheChain)
{
  // A ZIP upload whose first file fails: the second file gets no receive phase rather than one
  // that silently includes the failed file.
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.HttpRequest(0, true, true, Transport::Rest, sink);
  timeline.Received(kMs, Transport::Rest, 5, false, nullptr, sink);
  timeline.Received(5 * kMs, Transport::Rest, 500, true, nullptr, sink);
  timeline.Filtered(6 * kMs, Transport::Rest, sink);
  timeline.Stored(Stored(9 * kMs, Transport::Rest), sink);
  ASSERT_EQ(1u, sink.abandoned.size());
  EXPECT_FALSE(sink.abandoned[0].hasPart10Header);
  ASSERT_EQ(1u, sink.completed.size());
  EXPECT_FALSE(sink.completed[0].hasReceivePhase);
  EXPECT_EQ(5 * kMs, sink.completed[0].segmentStartNs);
  timeline.HttpRequest(20 * kMs, false, false, Transport::Rest, sink);
  EXPECT_EQ(1u, sink.abandoned.size());  // the request did store an instance
}


TEST(InstanceTimeline, WithoutReceivedInstanceTheRecordStartsAtTheFilter)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.HttpRequest(0, true, true, Transport::Rest, sink);
  timeline.Filtered(4 * kMs, Transport::Rest, sink);
  timeline.Stored(Stored(9 * kMs, Transport::Rest), sink);
  ASSERT_EQ(1u, sink.completed.size());
  const CompletedInstance& c = sink.completed[0];
  EXPECT_EQ(0, c.receivedNs);
  EXPECT_EQ(0, c.segmentStartNs);  // still from the HTTP arrival
  EXPECT_EQ(4 * kMs, c.filteredNs);

  // Two generic filter calls without OnStored between them are two instances.
  timeline.Filtered(20 * kMs, Transport::Dicom, sink);
  timeline.Filtered(30 * kMs, Transport::Dicom, sink);
  timeline.Stored(Stored(35 * kMs, Transport::Dicom), sink);
  ASSERT_EQ(1u, sink.abandoned.size());
  EXPECT_EQ(RecordStage::Filtered, sink.abandoned[0].stage);
  EXPECT_EQ(30 * kMs, sink.completed[1].segmentStartNs);
}


TEST(InstanceTimeline, OnStoredWithoutAnyEarlierEventStillCountsTheInstance)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.Stored(Stored(5 * kMs, Transport::Plugin), sink);
  timeline.Stored(Stored(6 * kMs, Transport::Plugin), sink);  // repeated
  ASSERT_EQ(2u, sink.completed.size());
  EXPECT_FALSE(sink.completed[0].hasTimeline);
  EXPECT_EQ(5 * kMs, sink.completed[0].segmentStartNs);
  EXPECT_TRUE(sink.abandoned.empty());
}


TEST(InstanceTimeline, TranscodeIsNotedOnlyInsideAnInstance)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.TranscodeStarted(kMs);  // out of order: ignored
  timeline.Received(2 * kMs, Transport::Rest, 1, true, nullptr, sink);
  timeline.TranscodeStarted(3 * kMs);
  timeline.Filtered(4 * kMs, Transport::Rest, sink);
  timeline.Stored(Stored(5 * kMs, Transport::Rest), sink);
  ASSERT_EQ(1u, sink.completed.size());
  EXPECT_TRUE(sink.completed[0].transcodeAttempted);
}


TEST(InstanceTimeline, ResetDropsTheOpenRecordSilently)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.Received(kMs, Transport::Rest, 1, true, nullptr, sink);
  timeline.Reset();
  EXPECT_EQ(0, timeline.OpenSinceNs());
  EXPECT_FALSE(timeline.HasOpenInstance());
  timeline.HttpRequest(2 * kMs, false, false, Transport::Rest, sink);
  EXPECT_TRUE(sink.abandoned.empty());
}


TEST(InstanceTimeline, RestOriginOutsideAnHttpRequestIsAJob)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  // A job thread: no HTTP request, REST origin (e.g. a modification job storing its result).
  timeline.Received(kMs, Transport::Rest, 10, true, nullptr, sink);
  timeline.Filtered(2 * kMs, Transport::Rest, sink);
  timeline.Stored(Stored(3 * kMs, Transport::Rest), sink);
  // The same thread serving HTTP afterwards: REST again.
  timeline.HttpRequest(10 * kMs, true, true, Transport::Rest, sink);
  timeline.Received(11 * kMs, Transport::Rest, 10, true, nullptr, sink);
  timeline.Stored(Stored(13 * kMs, Transport::Rest, 43), sink);
  ASSERT_EQ(2u, sink.completed.size());
  EXPECT_EQ(Transport::Job, sink.completed[0].transport);
  EXPECT_EQ(Transport::Rest, sink.completed[1].transport);
}


TEST(InstanceTimeline, ReceivedSyntaxTravelsWithTheRecord)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.Received(kMs, Transport::Dicom, 10, true, "1.2.840.10008.1.2.4.70", sink);
  timeline.Stored(Stored(3 * kMs, Transport::Dicom), sink);
  ASSERT_EQ(1u, sink.completed.size());
  EXPECT_STREQ("1.2.840.10008.1.2.4.70", sink.completed[0].labels.receivedSyntax);

  timeline.Received(5 * kMs, Transport::Dicom, 10, true, "1.2.840.10008.1.2", sink);
  timeline.Received(6 * kMs, Transport::Dicom, 10, true, nullptr, sink);  // abandons the previous one
  ASSERT_EQ(1u, sink.abandoned.size());
  timeline.Stored(Stored(7 * kMs, Transport::Dicom), sink);
  EXPECT_EQ(nullptr, sink.completed[1].labels.receivedSyntax);  // not inherited from the abandoned one
}


TEST(InstanceTimeline, ARecordEndedAtReceivedCarriesItsSopInstanceUidAndNoOtherDoes)
{
  // Orthanc 1.13 answers a duplicate after ReceivedInstance, before any filter: the plugin's thread
  // looks its UID up, whether the thread's next event or the plugin's thread ended it.
  InstanceTimeline timeline;
  RecordingSink sink;
  const std::string longest(64, '7');
  timeline.Received(kMs, Transport::Dicom, 10, true, nullptr, sink, nullptr, ThreadClockReading(), longest.c_str());
  EXPECT_EQ(longest, timeline.Open().ended.sopInstanceUid);
  timeline.Received(2 * kMs, Transport::Dicom, 10, true, nullptr, sink, nullptr, ThreadClockReading(), "1.2.3.4");
  ASSERT_EQ(1u, sink.abandoned.size());
  EXPECT_EQ(longest, sink.abandoned[0].sopInstanceUid);
  const OpenRecordView view = timeline.Open();
  ASSERT_TRUE(timeline.Conclude(view));
  EXPECT_STREQ("1.2.3.4", view.ended.sopInstanceUid);  // not a mix with the longer one before

  timeline.Received(3 * kMs, Transport::Dicom, 10, true, nullptr, sink);  // no UID in its meta header
  EXPECT_STREQ("", timeline.Open().ended.sopInstanceUid);
  timeline.Received(4 * kMs, Transport::Dicom, 10, true, nullptr, sink, nullptr, ThreadClockReading(), "1.2.3.5");
  timeline.Filtered(5 * kMs, Transport::Dicom, sink);  // past the filters: not a duplicate answered early
  EXPECT_STREQ("", timeline.Open().ended.sopInstanceUid);
}


TEST(InstanceTimeline, KnowsWhatTheHooksBeforeOnStoredSaw)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.HttpRequest(100 * kMs, true, true, Transport::Rest, sink, false, 17);
  EXPECT_FALSE(timeline.OpenedByReceivedInstance());
  EXPECT_TRUE(timeline.HttpRequestActive());
  timeline.Received(101 * kMs, Transport::Rest, 5000, true, "1.2.840.10008.1.2.1", sink, "1.2.840.10008.5.1.4.1.1.2");
  EXPECT_TRUE(timeline.OpenedByReceivedInstance());
  EXPECT_EQ(5000u, timeline.ReceivedBytes());
  EXPECT_STREQ("1.2.840.10008.1.2.1", timeline.ReceivedSyntax());
  EXPECT_STREQ("1.2.840.10008.5.1.4.1.1.2", timeline.ReceivedSopClass());
  EXPECT_FALSE(timeline.TranscodeAttempted());
  timeline.TranscodeStarted(102 * kMs);
  EXPECT_TRUE(timeline.TranscodeAttempted());
  timeline.Stored(Stored(110 * kMs, Transport::Rest), sink);
  EXPECT_FALSE(timeline.OpenedByReceivedInstance());
  ASSERT_EQ(1u, sink.completed.size());
  EXPECT_EQ(17, sink.completed[0].remoteIp);  // the client of the request, for OnStored's labels

  // A GET keeps no address; the next instance without meta header has no SOP class.
  timeline.HttpRequest(200 * kMs, false, false, Transport::Rest, sink, false, 18);
  EXPECT_FALSE(timeline.HttpRequestActive());
  timeline.Received(201 * kMs, Transport::Dicom, 10, false, nullptr, sink);
  EXPECT_EQ(nullptr, timeline.ReceivedSopClass());
  EXPECT_EQ(nullptr, timeline.ReceivedSyntax());
  EXPECT_EQ(kUnidentified, timeline.Open().ended.remoteIp);
}


namespace
{
  ThreadClockReading Clocks(int64_t cpuMs, int64_t runDelayMs)
  {
    ThreadClockReading reading;
    reading.cpuNs = cpuMs * kMs;
    reading.runDelayNs = runDelayMs * kMs;
    return reading;
  }

  // What a hook does: the clocks only when the timeline wants them.
  ThreadClockReading IfDue(const InstanceTimeline& timeline, TimelineEvent event, uint32_t period,
                           const ThreadClockReading& reading, bool ingestRoute = true)
  {
    return timeline.ClocksDue(event, period, ingestRoute) ? reading : ThreadClockReading();
  }
}


TEST(InstanceTimeline, OneInstanceInThePeriodHasItsClocksReadAtEachBoundAndAtTheOnStoredBeforeIt)
{
  constexpr uint32_t kPeriod = 7;
  constexpr size_t kCount = 10;
  InstanceTimeline timeline;
  RecordingSink sink;
  std::vector<bool> readAtStored;
  for (size_t i = 0; i < kCount; i++)
  {
    const int64_t t = 100 * static_cast<int64_t>(i);
    timeline.Received(t * kMs, Transport::Dicom, 500, true, nullptr, sink, nullptr,
                      IfDue(timeline, TimelineEvent::Received, kPeriod, Clocks(t, t)));
    timeline.Filtered((t + 1) * kMs, Transport::Dicom, sink,
                      IfDue(timeline, TimelineEvent::Filtered, kPeriod, Clocks(t + 1, t)));
    readAtStored.push_back(timeline.ClocksDue(TimelineEvent::Stored, kPeriod));
    timeline.Stored(Stored((t + 10) * kMs, Transport::Dicom), sink,
                    IfDue(timeline, TimelineEvent::Stored, kPeriod, Clocks(t + 3, t + 2)));
  }
  ASSERT_EQ(kCount, sink.completed.size());
  // The thread's first 5 instances and the 8th (one in the period), and the OnStored before each
  // (the gap's start).
  const std::vector<bool> sampled = {true, true, true, true, true, false, false, true, false, false};
  EXPECT_EQ((std::vector<bool>{true, true, true, true, true, false, true, true, false, false}), readAtStored);
  for (size_t i = 0; i < kCount; i++)
  {
    EXPECT_EQ(sampled[i], sink.completed[i].clocks.sampled) << i;
  }
  const InstanceClocks& fourth = sink.completed[3].clocks;
  EXPECT_EQ(300 * kMs, fourth.received.cpuNs);
  EXPECT_EQ(301 * kMs, fourth.filtered.cpuNs);
  EXPECT_EQ(303 * kMs, fourth.stored.cpuNs);
  EXPECT_EQ(302 * kMs, fourth.stored.runDelayNs);
  EXPECT_EQ(210 * kMs, fourth.previousStoredNs);  // the third instance's OnStored
  EXPECT_EQ(203 * kMs, fourth.previousStored.cpuNs);
  EXPECT_EQ(0, sink.completed[0].clocks.previousStoredNs);  // the thread's first: no gap before it
  EXPECT_FALSE(sink.completed[5].clocks.stored.HasCpu());   // the end of an instance not sampled is not kept

  // Period 0: never.
  InstanceTimeline off;
  EXPECT_FALSE(off.ClocksDue(TimelineEvent::Received, 0));
  EXPECT_FALSE(off.ClocksDue(TimelineEvent::Stored, 0));
}


TEST(InstanceTimeline, EveryInstanceOfARequestIsASegmentOfItsOwn)
{
  // Period 1: every instance; a ZIP request's second instance starts at the first one's OnStored.
  InstanceTimeline timeline;
  RecordingSink sink;
  EXPECT_FALSE(timeline.ClocksDue(TimelineEvent::HttpRequest, 1, false));  // not an ingest route
  timeline.HttpRequest(0, true, true, Transport::Rest, sink, false, kUnidentified, HttpConnection{7, 7},
                       IfDue(timeline, TimelineEvent::HttpRequest, 1, Clocks(0, 0)));
  timeline.Received(2 * kMs, Transport::Rest, 10, true, nullptr, sink, nullptr,
                    IfDue(timeline, TimelineEvent::Received, 1, Clocks(1, 0)));
  timeline.Filtered(3 * kMs, Transport::Rest, sink, IfDue(timeline, TimelineEvent::Filtered, 1, Clocks(2, 0)));
  timeline.Stored(Stored(5 * kMs, Transport::Rest), sink, IfDue(timeline, TimelineEvent::Stored, 1, Clocks(3, 1)));
  timeline.Received(6 * kMs, Transport::Rest, 10, true, nullptr, sink, nullptr,
                    IfDue(timeline, TimelineEvent::Received, 1, Clocks(4, 1)));
  timeline.Filtered(7 * kMs, Transport::Rest, sink, IfDue(timeline, TimelineEvent::Filtered, 1, Clocks(5, 1)));
  timeline.Stored(Stored(9 * kMs, Transport::Rest), sink, IfDue(timeline, TimelineEvent::Stored, 1, Clocks(6, 2)));
  ASSERT_EQ(2u, sink.completed.size());
  const CompletedInstance& second = sink.completed[1];
  EXPECT_TRUE(second.clocks.sampled);
  EXPECT_EQ(5 * kMs, second.segmentStartNs);
  EXPECT_EQ(5 * kMs, second.clocks.segmentStartNs);  // the first one's OnStored, read there
  EXPECT_EQ(3 * kMs, second.clocks.segmentStart.cpuNs);
  EXPECT_EQ(4 * kMs, second.clocks.received.cpuNs);
  EXPECT_EQ(-1, second.requestGapNs);  // not the request's first instance
}


TEST(InstanceTimeline, TheGapBetweenTwoRequestsOfOneConnection)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  auto request = [&](int64_t startMs, uint64_t connection, bool ingest = true) {
    timeline.HttpRequest(startMs * kMs, true, ingest, Transport::Rest, sink, false, kUnidentified,
                         HttpConnection{connection, connection});
    if (ingest)
    {
      timeline.Received((startMs + 1) * kMs, Transport::Rest, 10, true, nullptr, sink);
      timeline.Filtered((startMs + 2) * kMs, Transport::Rest, sink);
      timeline.Stored(Stored((startMs + 4) * kMs, Transport::Rest), sink);
    }
  };
  request(0, 5);
  request(11, 5);  // 7 ms after the first one's OnStored, same connection
  request(30, 6);  // another connection on this thread
  request(40, 0);  // a connection not known
  request(50, 0);
  request(60, 9);
  request(70, 9, false);  // another request of the connection in between: it holds part of the time
  request(80, 9);
  ASSERT_EQ(7u, sink.completed.size());
  EXPECT_EQ(-1, sink.completed[0].requestGapNs);
  EXPECT_EQ(7 * kMs, sink.completed[1].requestGapNs);
  EXPECT_EQ(-1, sink.completed[2].requestGapNs);
  EXPECT_EQ(-1, sink.completed[3].requestGapNs);
  EXPECT_EQ(-1, sink.completed[4].requestGapNs);
  EXPECT_EQ(-1, sink.completed[5].requestGapNs);
  EXPECT_EQ(-1, sink.completed[6].requestGapNs);
}


TEST(InstanceTimeline, TimedStorageCreatesAddTheirClocks)
{
  InstanceTimeline timeline;
  RecordingSink sink;
  timeline.Received(0, Transport::Dicom, 10, true, nullptr, sink, nullptr, Clocks(0, 0));
  timeline.Filtered(1 * kMs, Transport::Dicom, sink, Clocks(1, 0));
  timeline.StorageCreated(2 * kMs, 5 * kMs, Clocks(2, 0), Clocks(3, 1));
  timeline.StorageCreated(6 * kMs, 8 * kMs, Clocks(4, 1), Clocks(5, 1));
  timeline.Stored(Stored(9 * kMs, Transport::Dicom), sink, Clocks(6, 1));
  ASSERT_EQ(1u, sink.completed.size());
  const InstanceClocks& clocks = sink.completed[0].clocks;
  EXPECT_EQ(2 * kMs, clocks.createCpuNs);
  EXPECT_EQ(1 * kMs, clocks.createRunDelayNs);
  EXPECT_EQ(2 * kMs, clocks.firstCreateStart.cpuNs);
  EXPECT_EQ(5 * kMs, clocks.lastCreateEnd.cpuNs);

  // A create whose clocks were not read leaves the sum unknown, never short.
  timeline.Received(10 * kMs, Transport::Dicom, 10, true, nullptr, sink, nullptr, Clocks(10, 0));
  timeline.Filtered(11 * kMs, Transport::Dicom, sink, Clocks(11, 0));
  timeline.StorageCreated(12 * kMs, 13 * kMs, Clocks(12, 0), ThreadClockReading());
  timeline.Stored(Stored(14 * kMs, Transport::Dicom), sink, Clocks(14, 0));
  EXPECT_EQ(ThreadClockReading::kUnknown, sink.completed[1].clocks.createCpuNs);
}
