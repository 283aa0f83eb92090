// The rules of the store (transcoding, filters, storage, index, the site's code) and of HTTP.
#include "RulesTestInputs.h"
#include "Metrics/Histogram.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <utility>
#include <vector>

using namespace IngestPerf;
using namespace IngestPerf::RulesTests;


TEST(DiagnosisRules, ConnectionsBeyondBusyHttpThreadsSaturateThem)
{
  DiagnosisInput input = Healthy();
  input.configuration.httpThreadsCount = 2;
  input.httpConnectionsNow = 8;
  input.activeSeconds = 200 * 5.0 / 1000 / 1.9;  // 1.9 threads busy storing on average
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  const Finding& finding = diagnosis.findings[0];
  EXPECT_EQ("http-threads-saturated", finding.id);
  EXPECT_EQ(CostKind::Estimated, finding.costKind);
  EXPECT_NEAR(3 * 5.0, finding.costMsPerInstance, 0.01);  // 8 / 2 - 1 requests ahead, 5 ms each
  EXPECT_GT(SetTo(finding, "HttpThreadsCount").AsUnsigned(), 8u);
  EXPECT_TRUE(QuotesItsMeasurement(finding));

  // A queue of connections is enough, however little the threads store (keep-alive clients hold them).
  input.activeSeconds = 200 * 5.0 / 1000 / 0.4;
  EXPECT_EQ(std::set<std::string>{"http-threads-saturated"}, Fired(Merge(input)));
  input.activeSeconds = 200 * 5.0 / 1000 / 1.9;

  // The queue drained before the reader was served: the samples of the span still saw it.
  input.httpConnectionsNow = 0;
  input.connections.samples = 6;
  input.connections.httpMax = 8;
  input.connections.httpOverThreads = 3;
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("high", diagnosis.findings[0].confidence);
  input.connections = ConnectionSummary();
  input.httpConnectionsNow = 2;

  // Busy threads without a queue of connections: only when they are nearly always busy.
  input.httpConnectionsNow = 2;
  EXPECT_EQ(std::set<std::string>{"http-threads-saturated"}, Fired(Merge(input)));
  input.activeSeconds = 200 * 5.0 / 1000 / 1.0;  // one of two threads busy
  EXPECT_TRUE(Fired(Merge(input)).empty());
}


TEST(DiagnosisRules, TranscodingIsMeasuredOrInferredFromPreStore)
{
  DiagnosisInput input = Healthy();
  input.configuration.ingestTranscoding = true;
  input.configuration.ingestTranscodingSyntax = "1.2.840.10008.1.2.4.70";
  At(Rest(input), Phase::PreStore) = Phase_(200, 12.3);
  At(Rest(input), Phase::ServerTotal) = Phase_(200, 17);
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_FALSE(diagnosis.findings.empty());
  EXPECT_EQ("transcoding-bound", diagnosis.findings[0].id);
  EXPECT_EQ("medium", diagnosis.findings[0].confidence);
  EXPECT_EQ(1u, diagnosis.findings.size());  // preStore is not blamed on filters as well
  EXPECT_TRUE(QuotesItsMeasurement(diagnosis.findings[0]));

  input.transcoderHook = true;
  At(Rest(input), Phase::Transcode) = Phase_(200, 11.9);
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("transcoding-bound", diagnosis.findings[0].id);
  EXPECT_EQ("high", diagnosis.findings[0].confidence);
  EXPECT_NEAR(11.9, diagnosis.findings[0].costMsPerInstance, 0.01);  // per transcoded instance
}


TEST(DiagnosisRules, SlowFiltersArePreStoreWithoutTranscoding)
{
  DiagnosisInput input = Healthy();
  input.configuration.luaScripts = 1;
  At(Rest(input), Phase::PreStore) = Phase_(200, 30.5);
  At(Rest(input), Phase::ServerTotal) = Phase_(200, 35.2);
  At(Dicom(input), Phase::PreStore) = Phase_(200, 30.5);
  At(Dicom(input), Phase::ServerTotal) = Phase_(200, 35.0);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("slow-filters", diagnosis.findings[0].id);
  EXPECT_EQ("high", diagnosis.findings[0].confidence);
}


TEST(DiagnosisRules, StorageAndIndexAreToldApartOnlyWithTheTimedStorage)
{
  DiagnosisInput input = Healthy();
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::Persist) = Phase_(200, 30);
    At(*transport, Phase::ServerTotal) = Phase_(200, 30.5);
  }
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("storage-bound", diagnosis.findings[0].id);
  EXPECT_EQ("low", diagnosis.findings[0].confidence);
  EXPECT_TRUE(SetTo(diagnosis.findings[0], "IngestPerf.TimedStorage").AsBool());

  input.timedStorageActive = true;
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::StoragePrepare) = Phase_(200, 0.5);
    At(*transport, Phase::StorageWrite) = Phase_(200, 1.5);
    At(*transport, Phase::IndexUpdate) = Phase_(200, 28);
  }
  EXPECT_EQ(std::set<std::string>{"index-bound"}, Fired(Merge(input)));

  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::StorageWrite) = Phase_(200, 26);
    At(*transport, Phase::IndexUpdate) = Phase_(200, 3.5);
  }
  input.storageCreateMegabytesPerSecond = 20;
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("storage-bound", diagnosis.findings[0].id);
  EXPECT_EQ("high", diagnosis.findings[0].confidence);
  EXPECT_TRUE(diagnosis.findings[0].fix.configuration.empty());
  EXPECT_FALSE(QuotesItsMeasurement(diagnosis.findings[0]));  // a faster disk: not a configuration change

  input.configuration.storageCompression = true;
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::StoragePrepare) = Phase_(200, 24);
    At(*transport, Phase::StorageWrite) = Phase_(200, 2);
  }
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_FALSE(SetTo(diagnosis.findings[0], "StorageCompression").AsBool());
  EXPECT_TRUE(QuotesItsMeasurement(diagnosis.findings[0]));
}


TEST(DiagnosisRules, TheSitesPluginCallbacksAreNamedAndNeverTheStorage)
{
  // An orthanc-python OnStoredInstance of 30 ms, loaded after this plugin: timed between its two
  // OnStored callbacks.
  DiagnosisInput input = Healthy();
  input.pluginsAfter = {"libOrthancPython.so"};
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::OtherOnStored) = Phase_(200, 30.2);
    At(*transport, Phase::ServerTotal) = Phase_(200, 35.5);
  }
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  const Finding& after = diagnosis.findings[0];
  EXPECT_EQ("site-callbacks", after.id);
  EXPECT_EQ("high", after.confidence);
  EXPECT_NE(std::string::npos, after.verdict.find("OnStoredInstance")) << after.verdict;
  EXPECT_NE(std::string::npos, after.verdict.find("libOrthancPython.so")) << after.verdict;
  EXPECT_NE(std::string::npos, after.fix.action.find("queue")) << after.fix.action;

  // The same plugin loaded before this one: its 30 ms lie in persist, after the index commit.
  input = Healthy();
  input.pluginsBefore = {"libOrthancPython.so"};
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::Persist) = Phase_(200, 34);
    At(*transport, Phase::OnStoredWait) = Phase_(180, 31);  // the others' changes came after OnStored
    At(*transport, Phase::ServerTotal) = Phase_(200, 35.5);
  }
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size()) << diagnosis.findings[1].id;
  const Finding& before = diagnosis.findings[0];
  EXPECT_EQ("site-callbacks", before.id);
  EXPECT_EQ("medium", before.confidence);
  EXPECT_NE(std::string::npos, before.verdict.find("loaded before this plugin")) << before.verdict;
}


TEST(DiagnosisRules, APersistLongerForCStoreThanForHttpIsTheCStoreFilters)
{
  // An orthanc-python C-STORE filter of 30 ms: persist +30 ms over C-STORE only.
  DiagnosisInput input = Healthy();
  input.pluginsBefore = {"libOrthancPython.so"};
  At(Dicom(input), Phase::Persist) = Phase_(200, 35.4);
  At(Dicom(input), Phase::ServerTotal) = Phase_(200, 35.7);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size()) << diagnosis.findings[1].id;
  EXPECT_EQ("cstore-filters", diagnosis.findings[0].id);
  EXPECT_EQ("dicom", diagnosis.findings[0].transport);
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("libOrthancPython.so"));
  EXPECT_NEAR(30.9, diagnosis.findings[0].costMsPerInstance, 0.01);
}


TEST(DiagnosisRules, CStoreFailuresAfterTheFiltersWithASiteCStoreFilterMayBeItsRefusals)
{
  DiagnosisInput input = Healthy();
  TransportFigures& dicom = Dicom(input);
  dicom.outcomes[static_cast<size_t>(Outcome::Failed)] = 30;
  dicom.failures[static_cast<size_t>(FailureReason::AfterFilters)] = 30;
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_FALSE(diagnosis.findings.empty());
  EXPECT_EQ(0u, diagnosis.findings[0].verdict.find("Orthanc is losing instances")) << diagnosis.findings[0].verdict;
  input.configuration.pythonCallbacks = {"IncomingCStoreInstanceFilter"};
  diagnosis = Diagnose(Merge(input));
  ASSERT_FALSE(diagnosis.findings.empty());
  const Finding& f = diagnosis.findings[0];
  EXPECT_EQ("stores-failing", f.id);
  EXPECT_EQ(0u, f.verdict.find("Refused by the site's C-STORE filter, or lost")) << f.verdict;
  EXPECT_TRUE(SetTo(f, "IngestPerf.TimedStorage").AsBool());
}


TEST(DiagnosisRules, AnHttpReceiveThatWaitsWhileLuaCallbacksRunIsTheLuaLock)
{
  DiagnosisInput input = Healthy();
  At(Rest(input), Phase::Receive) = Phase_(200, 28.7);
  At(Rest(input), Phase::ServerTotal) = Phase_(200, 34.9);
  EXPECT_EQ(std::set<std::string>{"slow-uploads"}, Fired(Merge(input)));  // no Lua: the client's
  input.configuration.luaScripts = 1;
  input.configuration.luaCallbacks = {"OnStoredInstance"};
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("lua-lock", diagnosis.findings[0].id);
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("OnStoredInstance"));
}


TEST(DiagnosisRules, ABacklogOfChangesNamesTheSlowConsumer)
{
  DiagnosisInput input = Healthy();
  input.changeBacklog = 120;
  input.changePerInstanceWhileBacklogged = Phase_(80, 100.2);
  At(Rest(input), Phase::ChangeDispatch) = Phase_(80, 4000);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("slow-change-consumer", diagnosis.findings[0].id);
  EXPECT_NEAR(100.2, diagnosis.findings[0].costMsPerInstance, 0.01);
  EXPECT_LT(diagnosis.findings[0].shareOfCycle, 0);  // off the ingest path: no share of it

  // Right after a burst: changes wait, none timed while others waited yet; their lag stands for it.
  input.changePerInstanceWhileBacklogged = PhaseFigures();
  At(Rest(input), Phase::ChangeDispatch) = Phase_(1, 96);
  Diagnosis early = Diagnose(Merge(input));
  ASSERT_EQ(1u, early.findings.size());
  EXPECT_EQ(CostKind::Estimated, early.findings[0].costKind);
  EXPECT_EQ("medium", early.findings[0].confidence);
  // ... but a backlog of changes that are delivered fast is a burst, not a slow consumer.
  At(Rest(input), Phase::ChangeDispatch) = Phase_(1, 0.4);
  EXPECT_TRUE(Fired(Merge(input)).empty());

  // A consumer that keeps up is not named, however many changes there are.
  input.changeBacklog = 0;
  At(Rest(input), Phase::ChangeDispatch) = Phase_(80, 0.3);
  EXPECT_TRUE(Fired(Merge(input)).empty());
}


TEST(DiagnosisRules, SlowUploadsAreTheHttpReceive)
{
  DiagnosisInput input = Healthy();
  At(Rest(input), Phase::Receive) = Phase_(200, 105);
  At(Rest(input), Phase::ServerTotal) = Phase_(200, 110);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("slow-uploads", diagnosis.findings[0].id);
  EXPECT_NEAR(5.0, diagnosis.findings[0].evidence["uploadMegabytesPerSecond"].AsReal(), 0.01);
}


TEST(DiagnosisRules, CompressedAnswersAreNamedWithAnUnobservableCostAndListedLast)
{
  DiagnosisInput input = Healthy();
  input.configuration.orthanc = OrthancVersion::Parse("1.10.1");
  input.configuration.httpCompressionEnabled = true;
  Rest(input).answersAcceptingCompression = 200;
  At(Rest(input), Phase::Receive) = Phase_(200, 105);
  At(Rest(input), Phase::ServerTotal) = Phase_(200, 110);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(2u, diagnosis.findings.size());
  EXPECT_EQ("slow-uploads", diagnosis.findings[0].id);
  EXPECT_EQ("compressed-answers", diagnosis.findings[1].id);
  EXPECT_EQ(CostKind::Unobservable, diagnosis.findings[1].costKind);
  EXPECT_FALSE(SetTo(diagnosis.findings[1], "HttpCompressionEnabled").AsBool());
  EXPECT_TRUE(QuotesItsMeasurement(diagnosis.findings[1]));

  // From 1.12.2, Orthanc never compresses an answer this small.
  input.configuration.orthanc = OrthancVersion::Parse("1.12.7");
  EXPECT_EQ(std::set<std::string>{"slow-uploads"}, Fired(Merge(input)));
}
