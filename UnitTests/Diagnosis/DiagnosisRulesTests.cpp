// The diagnosis as a whole: what it judges, the outcomes first, the order of the findings, the CPU.
#include "RulesTestInputs.h"
#include "Metrics/Histogram.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <utility>
#include <vector>

using namespace IngestPerf;
using namespace IngestPerf::RulesTests;


TEST(DiagnosisRules, HealthyIngestHasNoFindingAndEveryRuleSaysWhy)
{
  DiagnosisInput input = Healthy();
  const Diagnosis diagnosis = Diagnose(Merge(input));
  EXPECT_TRUE(diagnosis.findings.empty());
  ASSERT_EQ(21u, diagnosis.checks.size());
  std::set<std::string> ids;
  for (const RuleCheck& check : diagnosis.checks)
  {
    EXPECT_FALSE(check.fired) << check.id;
    EXPECT_FALSE(check.reason.empty()) << check.id;
    ids.insert(check.id);
  }
  EXPECT_EQ(21u, ids.size());
  EXPECT_EQ(21u, DiagnosisRuleIds().size());
}


TEST(DiagnosisRules, LostInstancesComeBeforeAnyLatency)
{
  // A full disk: 319 of 494 instances refused, while the C-STORE answer also stalls.
  DiagnosisInput input = Healthy();
  input.dicomTcpNoDelay = false;
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 44.5, 43.8);
  Dicom(input).gapsNearDelayedAck = 190;
  Dicom(input).outcomes[static_cast<size_t>(Outcome::Failed)] = 300;
  Dicom(input).failures[static_cast<size_t>(FailureReason::DiskFull)] = 300;
  Rest(input).outcomes[static_cast<size_t>(Outcome::Failed)] = 19;
  Rest(input).failures[static_cast<size_t>(FailureReason::DiskFull)] = 19;
  FailingSender modality;
  modality.transport = Transport::Dicom;
  modality.remoteAet = "CT_SALLE_3";
  modality.remoteIp = "10.1.2.3";
  modality.failed = 300;
  modality.reasons[static_cast<size_t>(FailureReason::DiskFull)] = 300;
  input.failingSenders.push_back(modality);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(2u, diagnosis.findings.size());
  const Finding& lost = diagnosis.findings[0];
  EXPECT_EQ("stores-failing", lost.id);
  EXPECT_EQ(319u, lost.instancesLost);
  EXPECT_EQ("all", lost.transport);
  EXPECT_NE(std::string::npos, lost.verdict.find("319 of 719 stores failed")) << lost.verdict;
  EXPECT_NE(std::string::npos, lost.verdict.find("CT_SALLE_3 at 10.1.2.3: 300")) << lost.verdict;
  EXPECT_NE(std::string::npos, lost.verdict.find("diskFull")) << lost.verdict;
  EXPECT_EQ(319u, lost.evidence["failedByReason"]["diskFull"].AsUnsigned());
  EXPECT_EQ(300u, lost.evidence["failedBySenderSinceReset"][0]["failed"].AsUnsigned());
  EXPECT_NE(std::string::npos, lost.fix.action.find("Free space"));
  EXPECT_EQ("high", lost.confidence);
  EXPECT_EQ("cstore-answer-stall", diagnosis.findings[1].id);
}


TEST(DiagnosisRules, AFailureAfterTheFiltersWithoutEvidenceIsOfMediumConfidence)
{
  DiagnosisInput input = Healthy();
  Rest(input).outcomes[static_cast<size_t>(Outcome::Failed)] = 2;
  Rest(input).failures[static_cast<size_t>(FailureReason::AfterFilters)] = 2;
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("stores-failing", diagnosis.findings[0].id);
  EXPECT_EQ("rest", diagnosis.findings[0].transport);
  EXPECT_EQ("medium", diagnosis.findings[0].confidence);
  EXPECT_NE(std::string::npos, diagnosis.findings[0].fix.action.find("TimedStorage"));
}


TEST(DiagnosisRules, AClientsCutUploadIsTheClientsNamedWithItsAddressAtASeverityOfItsRate)
{
  // One truncated upload among 1140 stores in the last 5 minutes: Orthanc answered HTTP 400, it
  // lost nothing. Named, with the client's address, after anything that costs time.
  DiagnosisInput input = Healthy();
  input.window = "5m";
  Rest(input).outcomes[static_cast<size_t>(Outcome::Failed)] = 1;
  Rest(input).failures[static_cast<size_t>(FailureReason::BeforeFilters)] = 1;
  FailingSender client;
  client.transport = Transport::Rest;
  client.remoteAet = "(none)";
  client.remoteIp = "10.0.0.5";
  client.failed = 3;  // since the reset: another scope, said in a sentence of its own
  client.reasons[static_cast<size_t>(FailureReason::BeforeFilters)] = 3;
  input.failingSenders.push_back(client);
  Diagnosis diagnosis = Diagnose(Merge(input));
  EXPECT_EQ(std::set<std::string>{"unreadable-instances"}, Fired(Merge(input)));
  ASSERT_EQ(1u, diagnosis.findings.size());
  const Finding& f = diagnosis.findings[0];
  EXPECT_EQ(0u, f.verdict.find("Clients sent instances Orthanc could not read: 1 of ")) << f.verdict;
  EXPECT_NE(std::string::npos, f.verdict.find("in the last 5 minutes (0.")) << f.verdict;
  EXPECT_NE(std::string::npos, f.verdict.find(", rare. Since the reset, most came from 10.0.0.5 over rest: 3"))
    << f.verdict;
  EXPECT_EQ(0u, f.instancesLost);
  EXPECT_EQ("high", f.confidence);

  // Beside a slow disk, it comes after it.
  At(Rest(input), Phase::Persist) = Phase_(200, 40);
  At(Rest(input), Phase::ServerTotal) = Phase_(200, 45);
  diagnosis = Diagnose(Merge(input));
  ASSERT_LE(2u, diagnosis.findings.size());
  EXPECT_EQ("unreadable-instances", diagnosis.findings.back().id);

  // One in twenty: the sender's studies are incomplete, ranked with the instances lost.
  input = Healthy();
  Rest(input).outcomes[static_cast<size_t>(Outcome::Failed)] = 20;
  Rest(input).failures[static_cast<size_t>(FailureReason::BeforeFilters)] = 20;
  diagnosis = Diagnose(Merge(input));
  ASSERT_FALSE(diagnosis.findings.empty());
  EXPECT_EQ("unreadable-instances", diagnosis.findings[0].id);
  EXPECT_EQ(20u, diagnosis.findings[0].instancesLost);
  EXPECT_EQ(std::string::npos, diagnosis.findings[0].verdict.find("rare")) << diagnosis.findings[0].verdict;
  // With a Lua filter, a refusal is not told apart from an unreadable file.
  input.configuration.luaCallbacks = {"ReceivedInstanceFilter"};
  diagnosis = Diagnose(Merge(input));
  EXPECT_EQ(0u, diagnosis.findings[0].verdict.find("Orthanc could not read, or the site's filters refused"));
  EXPECT_EQ("medium", diagnosis.findings[0].confidence);
}


TEST(DiagnosisRules, NothingIsJudgedOnTooFewInstances)
{
  DiagnosisInput input;
  const Diagnosis diagnosis = Diagnose(input);
  EXPECT_TRUE(diagnosis.findings.empty());
  for (const RuleCheck& check : diagnosis.checks)
  {
    EXPECT_FALSE(check.fired);
  }
}


TEST(DiagnosisRules, DuplicatesAreCountedAndCostedAsWholeStores)
{
  DiagnosisInput input = Healthy();
  Rest(input).outcomes[static_cast<size_t>(Outcome::AlreadyStored)] = 100;
  Rest(input).outcomes[static_cast<size_t>(Outcome::NotDicom)] = 5;
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("rejected-or-duplicate", diagnosis.findings[0].id);
  EXPECT_EQ(CostKind::Estimated, diagnosis.findings[0].costKind);
  EXPECT_EQ(100u, diagnosis.findings[0].evidence["outcomes"]["alreadyStored"].AsUnsigned());
}


TEST(DiagnosisRules, FindingsAreOrderedByTheirCostPerInstance)
{
  DiagnosisInput input = Healthy();
  input.dicomTcpNoDelay = false;
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 44.5, 43.8);
  Dicom(input).gapsNearDelayedAck = 190;
  input.configuration.luaScripts = 1;
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::PreStore) = Phase_(200, 15);
    At(*transport, Phase::ServerTotal) = Phase_(200, 20);
  }
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(2u, diagnosis.findings.size());
  EXPECT_EQ("cstore-answer-stall", diagnosis.findings[0].id);
  EXPECT_EQ("slow-filters", diagnosis.findings[1].id);
  EXPECT_GT(diagnosis.findings[0].costMsPerInstance, diagnosis.findings[1].costMsPerInstance);
}


TEST(DiagnosisRules, EveryShareIsOfTheSameCycle)
{
  // A slow filter on both transports while the C-STORE gaps are long: the finding on "all" takes its
  // share of the cycle of every instance (serverTotal, plus the gap for C-STORE), weighted by the
  // instances, as the sender's finding takes its share of the C-STORE cycle.
  DiagnosisInput input = SenderStalling(50);
  input.configuration.luaScripts = 1;
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::PreStore) = Phase_(200, 15);
    At(*transport, Phase::ServerTotal) = Phase_(200, 20);
  }
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(2u, diagnosis.findings.size());
  const double gapMean = At(Dicom(input), Phase::AssociationGap).meanMs;
  const double allCycle = (20 * 200 + (20 + gapMean) * 200) / 400.0;
  for (const Finding& finding : diagnosis.findings)
  {
    if (finding.id == "slow-filters")
    {
      EXPECT_NEAR(15 / allCycle, finding.shareOfCycle, 0.001);
    }
    else
    {
      EXPECT_EQ("sender-stall", finding.id);
      EXPECT_NEAR(50 * 44.0 / 199 / (20 + gapMean), finding.shareOfCycle, 0.001);
    }
  }
}


namespace
{
  // `sampled` instances of the phase split: on a CPU, waiting for one, blocked (ms, adding up to its mean).
  void Split(PhaseFigures& phase, uint64_t sampled, double onCpuMs, double waitingMs, double blockedMs)
  {
    phase.parts.sampled = sampled;
    phase.parts.runDelaySampled = sampled;
    phase.parts.onCpuMs = onCpuMs;
    phase.parts.waitingForCpuMs = waitingMs;
    phase.parts.blockedMs = blockedMs;
    phase.parts.meanMs = onCpuMs + waitingMs + blockedMs;
  }
}


TEST(DiagnosisRules, ThreadsWaitingForACpuAreNamedAndTheStorageIsNotBlamed)
{
  // Busy processes beside Orthanc on its cores: each store 30 ms, 20 of them waiting for a CPU.
  DiagnosisInput input = Healthy();
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::Persist) = Phase_(200, 25);
    At(*transport, Phase::ServerTotal) = Phase_(200, 30);
    Split(At(*transport, Phase::Persist), 25, 3, 18, 4);
    Split(At(*transport, Phase::ServerTotal), 25, 5, 20, 5);
  }
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size()) << diagnosis.findings[1].id;
  const Finding& finding = diagnosis.findings[0];
  EXPECT_EQ("waiting-for-cpu", finding.id);
  EXPECT_NEAR(20.0, finding.costMsPerInstance, 0.01);  // 20 of 30 ms, on every instance
  EXPECT_NE(std::string::npos, finding.verdict.find("Waiting for a CPU"));
  EXPECT_NE(std::string::npos, finding.fix.action.find("CPU quota"));
  EXPECT_EQ("high", finding.confidence);
  EXPECT_EQ(50u, finding.evidence["serverTotalParts"]["splitInstances"].AsUnsigned());  // both transports
  for (const RuleCheck& check : diagnosis.checks)
  {
    if (check.id == "storage-bound")
    {
      EXPECT_NE(std::string::npos, check.reason.find("see waiting-for-cpu")) << check.reason;
    }
  }

  // Too few split instances: not judged.
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    Split(At(*transport, Phase::ServerTotal), 2, 5, 20, 5);
    Split(At(*transport, Phase::Persist), 2, 3, 18, 4);
  }
  EXPECT_EQ(0u, Fired(Merge(input)).count("waiting-for-cpu"));

  // A healthy share of waiting is no finding.
  input = Healthy();
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    Split(At(*transport, Phase::ServerTotal), 25, 2, 0.3, 2.5);
  }
  EXPECT_TRUE(Fired(Merge(input)).empty());
}


TEST(DiagnosisRules, PersistSaysWhetherItIsBlockedOrOnACpuWhateverOwnsTheStorage)
{
  DiagnosisInput input = Healthy();
  input.configuration.indexPluginSection = "PostgreSQL";
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    At(*transport, Phase::Persist) = Phase_(200, 30);
    At(*transport, Phase::ServerTotal) = Phase_(200, 30.5);
    Split(At(*transport, Phase::Persist), 25, 2, 1, 27);
  }
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("storage-bound", diagnosis.findings[0].id);
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("Blocked in persist"))
    << diagnosis.findings[0].verdict;
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("PostgreSQL"));
  EXPECT_EQ("medium", diagnosis.findings[0].confidence);
  EXPECT_TRUE(SetTo(diagnosis.findings[0], "IngestPerf.TimedStorage").AsBool());

  // A storage plugin owns the storage area: still blocked, and the advice is not the timed storage.
  input.storageOwner = "PostgreSQL.EnableStorage";
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("Blocked in persist"));
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("PostgreSQL.EnableStorage"));
  EXPECT_TRUE(diagnosis.findings[0].fix.configuration.empty());

  // Compressing the files: on a CPU, and the fix is StorageCompression.
  input.storageOwner.clear();
  input.configuration.storageCompression = true;
  for (TransportFigures* transport : {&Rest(input), &Dicom(input)})
  {
    Split(At(*transport, Phase::Persist), 25, 26, 1, 3);
  }
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("On a CPU in persist"));
  EXPECT_FALSE(SetTo(diagnosis.findings[0], "StorageCompression").AsBool());
  EXPECT_EQ(50u, diagnosis.findings[0].evidence["persistParts"]["splitInstances"].AsUnsigned());
}


TEST(DiagnosisRules, AKeepAliveClientThatWaitsBetweenRequestsIsNamedAndOneThatDoesNotIsNot)
{
  DiagnosisInput input = Healthy();
  At(Rest(input), Phase::RequestGap) = Phase_(199, 7.4);
  Split(At(Rest(input), Phase::RequestGap), 24, 0.1, 0.05, 7.25);
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  const Finding& finding = diagnosis.findings[0];
  EXPECT_EQ("slow-http-client", finding.id);
  EXPECT_EQ("rest", finding.transport);
  EXPECT_NE(std::string::npos, finding.verdict.find("client waits")) << finding.verdict;
  EXPECT_NEAR(7.4 / 12.4, finding.shareOfCycle, 0.001);  // of serverTotal + requestGap
  EXPECT_TRUE(finding.fix.configuration.empty());

  // A client that sends at once: half a millisecond between requests.
  At(Rest(input), Phase::RequestGap) = Phase_(199, 0.5);
  Split(At(Rest(input), Phase::RequestGap), 24, 0.1, 0.05, 0.35);
  EXPECT_TRUE(Fired(Merge(input)).empty());

  // The time is Orthanc's own: its answer on a CPU (compressing it).
  input.configuration.httpCompressionEnabled = true;
  At(Rest(input), Phase::RequestGap) = Phase_(199, 7.4);
  Split(At(Rest(input), Phase::RequestGap), 24, 6, 0.4, 1);
  diagnosis = Diagnose(Merge(input));
  ASSERT_FALSE(diagnosis.findings.empty());
  EXPECT_EQ("slow-http-client", diagnosis.findings[0].id);
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("Orthanc's answers"))
    << diagnosis.findings[0].verdict;
  EXPECT_FALSE(SetTo(diagnosis.findings[0], "HttpCompressionEnabled").AsBool());
}


TEST(DiagnosisRules, ARequestGapMadeLongByOrthancWaitingForACpuIsNotTheClients)
{
  DiagnosisInput input = Healthy();
  At(Rest(input), Phase::RequestGap) = Phase_(199, 7.2);
  Split(At(Rest(input), Phase::RequestGap), 24, 0.6, 4.1, 2.5);  // the client's part: 2.5 ms
  const Diagnosis diagnosis = Diagnose(Merge(input));
  EXPECT_TRUE(diagnosis.findings.empty());
  for (const RuleCheck& check : diagnosis.checks)
  {
    if (check.id == "slow-http-client")
    {
      EXPECT_NE(std::string::npos, check.reason.find("the client's part 2.5 ms")) << check.reason;
    }
  }
}
