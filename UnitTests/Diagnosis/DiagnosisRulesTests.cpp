#include "Diagnosis/DiagnosisInput.h"
#include "Diagnosis/DiagnosisRules.h"
#include "Metrics/Histogram.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <utility>
#include <vector>

using namespace IngestPerf;

namespace
{
  PhaseFigures Phase_(uint64_t count, double meanMs, double p50Ms = -1)
  {
    PhaseFigures figures;
    figures.count = count;
    figures.meanMs = meanMs;
    figures.p50Ms = p50Ms < 0 ? meanMs : p50Ms;
    figures.p90Ms = meanMs * 1.2;
    figures.p99Ms = meanMs * 1.5;
    figures.maxMs = meanMs * 2;
    figures.sumMs = meanMs * static_cast<double>(count);
    return figures;
  }

  PhaseFigures& At(TransportFigures& transport, Phase phase)
  {
    return transport.phases[static_cast<size_t>(phase)];
  }

  void SetStored(TransportFigures& transport, uint64_t stored)
  {
    transport.stored = stored;
    transport.outcomes[static_cast<size_t>(Outcome::Stored)] = stored;
  }

  // A healthy Orthanc on the development machine: 200 HTTP instances and 200 by one C-STORE
  // association with TCP_NODELAY on both sides, over 20 s of ingest.
  DiagnosisInput Healthy()
  {
    DiagnosisInput input;
    input.window = "5m";
    input.seconds = 300;
    input.activeSeconds = 20;
    input.orthancVersion = "1.12.7";
    input.configuration.orthanc = OrthancVersion::Parse("1.12.7");
    input.configuration.httpCompressionEnabled = false;
    input.dicomTcpNoDelay = true;
    input.dicomConnectionsNow = 0;
    input.httpConnectionsNow = 0;

    TransportFigures& rest = input.transports[static_cast<size_t>(Transport::Rest)];
    SetStored(rest, 200);
    At(rest, Phase::Receive) = Phase_(200, 0.2);
    At(rest, Phase::PreStore) = Phase_(200, 0.3);
    At(rest, Phase::Persist) = Phase_(200, 4.5);
    At(rest, Phase::ServerTotal) = Phase_(200, 5.0);
    rest.receivedBytes = rest.storedBytes = 200 * 525000;

    TransportFigures& dicom = input.transports[static_cast<size_t>(Transport::Dicom)];
    SetStored(dicom, 200);
    At(dicom, Phase::PreStore) = Phase_(200, 0.3);
    At(dicom, Phase::Persist) = Phase_(200, 4.5);
    At(dicom, Phase::ServerTotal) = Phase_(200, 4.8);
    At(dicom, Phase::AssociationGap) = Phase_(199, 2.5);
    dicom.storedBytes = 200 * 525000;
    return input;
  }

  // `all` as GatherDiagnosisInput makes it: the transports merged (means weighted by counts).
  DiagnosisInput& Merge(DiagnosisInput& input)
  {
    TransportFigures all;
    for (const TransportFigures& transport : input.transports)
    {
      all.stored += transport.stored;
      for (size_t o = 0; o < kOutcomeCount; o++)
      {
        all.outcomes[o] += transport.outcomes[o];
      }
      for (size_t r = 0; r < kFailureReasonCount; r++)
      {
        all.failures[r] += transport.failures[r];
      }
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        PhaseFigures& target = all.phases[p];
        const PhaseFigures& source = transport.phases[p];
        if (source.count == 0)
        {
          continue;
        }
        target.sumMs += source.sumMs;
        target.count += source.count;
        target.meanMs = target.sumMs / static_cast<double>(target.count);
        target.p50Ms = std::max(target.p50Ms, source.p50Ms);
        target.p99Ms = std::max(target.p99Ms, source.p99Ms);
        // The parts' means, weighted by the split instances.
        PartFigures& parts = target.parts;
        const PartFigures& more = source.parts;
        const double before = static_cast<double>(parts.sampled);
        const double after = before + static_cast<double>(more.sampled);
        if (after > 0)
        {
          const auto weigh = [&](double a, double b) {
            return (a * before + b * static_cast<double>(more.sampled)) / after;
          };
          parts.meanMs = weigh(parts.meanMs, more.meanMs);
          parts.onCpuMs = weigh(parts.onCpuMs, more.onCpuMs);
          parts.waitingForCpuMs = weigh(parts.waitingForCpuMs, more.waitingForCpuMs);
          parts.blockedMs = weigh(parts.blockedMs, more.blockedMs);
          parts.sampled += more.sampled;
          parts.runDelaySampled += more.runDelaySampled;
        }
      }
      all.gapsNearDelayedAck += transport.gapsNearDelayedAck;
      all.gapsNearTwoDelayedAcks += transport.gapsNearTwoDelayedAcks;
      all.gapMsNearDelayedAcks += transport.gapMsNearDelayedAcks;
      all.answersAcceptingCompression += transport.answersAcceptingCompression;
    }
    input.all = all;
    return input;
  }

  std::set<std::string> Fired(const DiagnosisInput& input)
  {
    std::set<std::string> fired;
    for (const Finding& finding : Diagnose(input).findings)
    {
      fired.insert(finding.id);
    }
    return fired;
  }

  // What the finding's fix sets the key to; a failure of the test when it does not set it.
  ConfigurationValue SetTo(const Finding& finding, const std::string& key)
  {
    const ConfigurationValue* value = finding.fix.Find(key);
    if (value == nullptr)
    {
      ADD_FAILURE() << finding.id << "'s fix does not set " << key;
      return ConfigurationValue("(not set)");
    }
    return *value;
  }

  // A configuration fix measured by ingest_perf/benchmarks/diagnosis_effects.py quotes its figures from there.
  bool QuotesItsMeasurement(const Finding& finding)
  {
    return finding.fix.effect.find("docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after") !=
           std::string::npos;
  }

  TransportFigures& Dicom(DiagnosisInput& input)
  {
    return input.transports[static_cast<size_t>(Transport::Dicom)];
  }

  TransportFigures& Rest(DiagnosisInput& input)
  {
    return input.transports[static_cast<size_t>(Transport::Rest)];
  }
}


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


TEST(DiagnosisRules, GapsAtTheDelayedAckTimerAreTheAnswerStall)
{
  DiagnosisInput input = Healthy();
  input.dicomTcpNoDelay = false;
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 44.5, 43.8);
  Dicom(input).gapsNearDelayedAck = 190;
  Dicom(input).gapMsNearDelayedAcks = 190 * 44.0;
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  const Finding& finding = diagnosis.findings[0];
  EXPECT_EQ("cstore-answer-stall", finding.id);
  EXPECT_NE(std::string::npos, finding.verdict.find("90% of each C-STORE cycle")) << finding.verdict;
  EXPECT_EQ("dicom", finding.transport);
  EXPECT_NEAR(44.5, finding.costMsPerInstance, 0.01);
  EXPECT_NEAR(44.5 / (44.5 + 4.8), finding.shareOfCycle, 0.001);
  // The operator's environment, not a configuration key: a plugin does not write Orthanc's environment.
  EXPECT_TRUE(finding.fix.configuration.empty());
  EXPECT_NE(std::string::npos, finding.fix.action.find("Start Orthanc with TCP_NODELAY=1 in its environment"))
    << finding.fix.action;
  EXPECT_NE(std::string::npos, finding.fix.action.find("Environment=TCP_NODELAY=1 in a drop-in")) << finding.fix.action;
  EXPECT_NE(std::string::npos, finding.fix.action.find("-e TCP_NODELAY=1")) << finding.fix.action;
  EXPECT_EQ(std::string::npos, finding.fix.action.find("DicomTcpNoDelay")) << finding.fix.action;
  EXPECT_EQ("high", finding.confidence);

  // The same gaps with TCP_NODELAY already in effect are the sender's own stall.
  input.dicomTcpNoDelay = true;
  const Diagnosis sender = Diagnose(Merge(input));
  ASSERT_EQ(1u, sender.findings.size());
  EXPECT_EQ("sender-stall", sender.findings[0].id);
  EXPECT_NE(std::string::npos, sender.findings[0].verdict.find("sender's own Nagle stall"));

  // Gaps spread far from the timer are not the stall either.
  input.dicomTcpNoDelay = false;
  Dicom(input).gapsNearDelayedAck = 40;
  Dicom(input).gapMsNearDelayedAcks = 40 * 44.0;
  EXPECT_EQ(std::set<std::string>{"slow-sender"}, Fired(Merge(input)));
}


namespace
{
  HistogramSnapshot GapsOf(const std::vector<std::pair<double, int>>& msAndCounts)
  {
    Histogram histogram{};
    for (const auto& gap : msAndCounts)
    {
      for (int i = 0; i < gap.second; i++)
      {
        histogram.Record(static_cast<int64_t>((gap.first + 0.01 * i) * 1e6));
      }
    }
    return histogram.Snapshot();
  }
}


// The delayed-ACK timer is read from the gaps: Linux's 40 ms, and Windows' 200 ms (a modality console
// acknowledging Orthanc's answer late), each with the gaps short between the stalls.
TEST(DiagnosisInput, TheDelayedAckTimerIsTheOneTheGapsShow)
{
  EXPECT_EQ(40, DelayedAckTimerOf(GapsOf({{0.4, 50}, {41.5, 40}, {83, 5}})).ms);
  EXPECT_EQ(200, DelayedAckTimerOf(GapsOf({{0.4, 50}, {203, 40}})).ms);
  // A Windows client's timer and Orthanc's own on Linux, both in one gap: 240 ms, one band of 200's.
  EXPECT_EQ(200, DelayedAckTimerOf(GapsOf({{0.4, 10}, {242, 30}, {41, 3}})).ms);
  EXPECT_EQ(40, DelayedAckTimerOf(GapsOf({{0.4, 50}, {7, 50}})).ms);  // neither: the bands are 40 ms's
  EXPECT_EQ(40, DelayedAckTimerOf(HistogramSnapshot()).ms);
  const DelayedAckTimer& windows = DelayedAckTimerOf(GapsOf({{203, 40}}));
  EXPECT_EQ(180, windows.one.fromMs);
  EXPECT_EQ(360, windows.one.toMs);
}


TEST(DiagnosisRules, GapsAtWindowsDelayedAckTimerAreTheAnswerStallToo)
{
  DiagnosisInput input = Healthy();
  input.dicomTcpNoDelay = false;
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 205.5, 203.8);
  Dicom(input).delayedAck = &kWindowsDelayedAck;
  Dicom(input).gapsNearDelayedAck = 190;
  Dicom(input).gapMsNearDelayedAcks = 190 * 204.0;
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  const Finding& finding = diagnosis.findings[0];
  EXPECT_EQ("cstore-answer-stall", finding.id);
  EXPECT_NE(std::string::npos, finding.explanation.find("at the 200 ms delayed-ACK timer")) << finding.explanation;
  EXPECT_NE(std::string::npos, finding.fix.effect.find("about 200 ms")) << finding.fix.effect;
  EXPECT_EQ(200, finding.evidence["delayedAckTimerMs"].AsReal());
  for (const RuleCheck& check : diagnosis.checks)
  {
    if (check.id == "cstore-answer-stall")
    {
      EXPECT_NE(std::string::npos, check.reason.find("180-360 ms")) << check.reason;
    }
  }
}


TEST(DiagnosisRules, TheAnswerStallIsNamedBesideASlowStore)
{
  // Every gap at the timer while a site's OnStoredInstance of 30 ms lengthens the store: two causes,
  // each named (the stall's rule once wanted serverTotal under half the gap).
  DiagnosisInput input = Healthy();
  input.dicomTcpNoDelay = false;
  input.pluginsAfter = {"libOrthancPython.so"};
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 44.5, 43.8);
  Dicom(input).gapsNearDelayedAck = 199;
  Dicom(input).gapMsNearDelayedAcks = 199 * 44.0;
  At(Dicom(input), Phase::OtherOnStored) = Phase_(200, 30.3);
  At(Dicom(input), Phase::ServerTotal) = Phase_(200, 35.1);
  EXPECT_EQ((std::set<std::string>{"cstore-answer-stall", "site-callbacks"}), Fired(Merge(input)));
}


TEST(DiagnosisRules, TheSitesReceivedInstanceCallbackIsNamedWhereItsScriptRegistersIt)
{
  // An orthanc-python ReceivedInstanceCallback of 20 ms: in HTTP receive and the C-STORE gap.
  DiagnosisInput input = Healthy();
  At(Rest(input), Phase::Receive) = Phase_(200, 20.9);
  At(Rest(input), Phase::ServerTotal) = Phase_(200, 25.5);
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 22.6, 22.4);
  EXPECT_EQ((std::set<std::string>{"slow-uploads", "slow-sender"}), Fired(Merge(input)));  // no script: the clients'
  input.configuration.pythonCallbacks = {"ReceivedInstanceCallback", "OnStoredInstance"};
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("received-instance-callback", diagnosis.findings[0].id);
  EXPECT_EQ("all", diagnosis.findings[0].transport);
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("ReceivedInstanceCallback"));
  input.receivedInstanceHeld = true;  // this plugin holds it: the site's script could not have it
  EXPECT_EQ((std::set<std::string>{"slow-uploads", "slow-sender"}), Fired(Merge(input)));
}


TEST(DiagnosisRules, SmallDatasetsStallTwiceAnInstance)
{
  // storescu without TCP_NODELAY sending 8 KB instances: its dataset waits for Orthanc's delayed
  // ACK as Orthanc's answer waits for its own, about 86 ms a gap (measured).
  DiagnosisInput input = Healthy();
  input.dicomTcpNoDelay = false;
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 86.6);
  Dicom(input).gapsNearTwoDelayedAcks = 199;
  Dicom(input).gapMsNearDelayedAcks = 199 * 86.6;
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("cstore-answer-stall", diagnosis.findings[0].id);
  EXPECT_NE(std::string::npos, diagnosis.findings[0].verdict.find("and the sender's dataset"));
}


TEST(DiagnosisRules, LongGapsWithFreeWorkersAreASlowSender)
{
  DiagnosisInput input = Healthy();
  At(Dicom(input), Phase::AssociationGap) = Phase_(199, 160);
  input.activeSeconds = 199 * 0.165;
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("slow-sender", diagnosis.findings[0].id);
  EXPECT_TRUE(diagnosis.findings[0].fix.configuration.empty());  // nothing to change in Orthanc
  EXPECT_NE(std::string::npos, diagnosis.findings[0].fix.action.find("TCP_NODELAY option"));

  // Without TCP_NODELAY on Orthanc's side, a part of each gap may be its answer's: that fix comes first.
  input.dicomTcpNoDelay = false;
  const Diagnosis unfixed = Diagnose(Merge(input));
  ASSERT_EQ(1u, unfixed.findings.size());
  EXPECT_TRUE(unfixed.findings[0].fix.configuration.empty());
  EXPECT_EQ(0u, unfixed.findings[0].fix.action.find("Start Orthanc with TCP_NODELAY=1 in its environment"))
    << unfixed.findings[0].fix.action;
  EXPECT_EQ(std::string::npos, unfixed.findings[0].fix.action.find("cannot"));
}


TEST(DiagnosisRules, MoreAssociationsThanWorkersSaturateThePool)
{
  DiagnosisInput input = Healthy();
  input.configuration.dicomThreadsCount = 1;
  // 8 associations of 20 instances, each waiting ~7 stores of the others between its instances.
  SetStored(Dicom(input), 160);
  At(Dicom(input), Phase::ServerTotal) = Phase_(160, 5);
  At(Dicom(input), Phase::AssociationGap) = Phase_(152, 38);
  input.activeSeconds = 160 * 0.005 + 0.2;
  Dicom(input).gapsNearDelayedAck = 120;  // in the timer's band, by chance: the pool explains them
  input.dicomTcpNoDelay = false;
  Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("dicom-workers-saturated", diagnosis.findings[0].id);
  EXPECT_EQ("medium", diagnosis.findings[0].confidence);
  EXPECT_GE(SetTo(diagnosis.findings[0], "DicomThreadsCount").AsUnsigned(), 2u);
  EXPECT_TRUE(QuotesItsMeasurement(diagnosis.findings[0]));

  input.dicomConnectionsNow = 8;
  diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("high", diagnosis.findings[0].confidence);
  EXPECT_EQ(8u, SetTo(diagnosis.findings[0], "DicomThreadsCount").AsUnsigned());

  // The same load with 8 workers: one association per worker, short gaps, nothing to say.
  input.configuration.dicomThreadsCount = 8;
  At(Dicom(input), Phase::AssociationGap) = Phase_(152, 2);
  Dicom(input).gapsNearDelayedAck = 0;
  EXPECT_TRUE(Fired(Merge(input)).empty());
}


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


namespace
{
  // Orthanc's side fixed, one C-STORE association of 200 instances whose sender keeps Nagle's
  // algorithm: `stalled` gaps of 44 ms at the timer, the others of 1.1 ms (measured with storescu and
  // Orthanc as senders: gap p50 1-3 ms, p90 44-47, mean 7-14).
  DiagnosisInput SenderStalling(uint64_t stalled)
  {
    DiagnosisInput input = Healthy();
    const uint64_t gaps = 199;
    const double sum = static_cast<double>(stalled) * 44.0 + static_cast<double>(gaps - stalled) * 1.1;
    PhaseFigures& gap = At(Dicom(input), Phase::AssociationGap);
    gap = Phase_(gaps, sum / static_cast<double>(gaps), 1.1);
    gap.p90Ms = stalled * 10 >= gaps ? 44.0 : 1.3;
    gap.p99Ms = stalled * 100 >= gaps ? 45.0 : 1.5;
    Dicom(input).gapsNearDelayedAck = stalled;
    Dicom(input).gapMsNearDelayedAcks = static_cast<double>(stalled) * 44.0;
    return input;
  }

  CStoreSender SenderNamed(const char* aet, uint64_t stalled)
  {
    CStoreSender sender;
    sender.remoteAet = aet;
    sender.software = SenderSoftwareOfCallingAet(aet);
    sender.gaps = 199;
    sender.gapsNearDelayedAcks = stalled;
    sender.gapMsNearDelayedAcks = static_cast<double>(stalled) * 44.0;
    return sender;
  }
}


TEST(DiagnosisRules, BimodalGapsAtTheDelayedAckTimerAreTheSendersStall)
{
  // Issue 20's case: after Orthanc's fix, 25% of the gaps at 44 ms: gap mean 11.9 ms, p50 1.1 ms,
  // p90 44 ms; serverTotal 4.8 ms. The old rule (gap mean >= 20 ms and p50 >= 2 x serverTotal) said
  // nothing, though the stalls take 66% of the cycle.
  DiagnosisInput input = SenderStalling(50);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  const Finding& finding = diagnosis.findings[0];
  EXPECT_EQ("sender-stall", finding.id);
  EXPECT_EQ("dicom", finding.transport);
  const double cycle = 4.8 + At(Dicom(input), Phase::AssociationGap).meanMs;
  EXPECT_NEAR(50 * 44.0 / 199, finding.costMsPerInstance, 0.001);
  EXPECT_NEAR(50 * 44.0 / 199 / cycle, finding.shareOfCycle, 0.001);
  // The verdict's percentage is the finding's shareOfCycle; the explanation quotes the mean with its tail.
  char share[32];
  std::snprintf(share, sizeof(share), "%.0f%% of each C-STORE cycle", finding.shareOfCycle * 100);
  EXPECT_NE(std::string::npos, finding.verdict.find(share)) << finding.verdict;
  EXPECT_NE(std::string::npos, finding.explanation.find("p50 1.1, p90 44.0")) << finding.explanation;
  EXPECT_EQ(50u, finding.evidence["gapsAtDelayedAckTimer"].AsUnsigned());
  EXPECT_EQ("high", finding.confidence);
  EXPECT_TRUE(finding.fix.configuration.empty());  // nothing in this Orthanc's configuration

  // The slow-sender rule is not asked again for the same gaps.
  for (const RuleCheck& check : diagnosis.checks)
  {
    if (check.id == "slow-sender")
    {
      EXPECT_EQ("the gaps are explained by the finding above", check.reason);
    }
  }

  // Before Orthanc's fix, the same gaps are not judged as the sender's: its answers stall at the timer.
  input.dicomTcpNoDelay = false;
  EXPECT_EQ(0u, Fired(Merge(input)).count("sender-stall"));
}


TEST(DiagnosisRules, ShortGapsAndAFewAtTheTimerAreNoStall)
{
  // Uniform short gaps.
  DiagnosisInput uniform = SenderStalling(0);
  EXPECT_TRUE(Fired(Merge(uniform)).empty());
  // Two long gaps (a busy machine's hiccups), or 4 in 199 (2%): however much of the short gaps' time
  // they take, not a stall.
  for (uint64_t stalled : {2u, 4u})
  {
    DiagnosisInput input = SenderStalling(stalled);
    EXPECT_TRUE(Fired(Merge(input)).empty()) << stalled;
  }
  // From 3 gaps and 3% of them at the timer, taking a quarter of the gaps' time and a tenth of the
  // cycle: named, with medium confidence below 10% of the gaps.
  DiagnosisInput input = SenderStalling(7);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_EQ("sender-stall", diagnosis.findings[0].id);
  EXPECT_EQ("medium", diagnosis.findings[0].confidence);

  // Gaps at the timer that are a small part of a long cycle (a slow store): not worth naming.
  At(Dicom(input), Phase::ServerTotal) = Phase_(200, 60);
  EXPECT_EQ(0u, Fired(Merge(input)).count("sender-stall"));
}


TEST(DiagnosisRules, TheSendersStallAdviceDependsOnWhatIsKnownOfTheSender)
{
  struct Case
  {
    const char* aet;
    const char* software;
    const char* advice;
  };
  const Case cases[] = {
    {"STORESCU", "DCMTK", "TCP_NODELAY=1 in its environment"},
    {"DCMSEND", "DCMTK", "TCP_NODELAY=1 in its environment"},
    {"ORTHANC", "Orthanc", "start it with TCP_NODELAY=1 in its environment (systemd: Environment=TCP_NODELAY=1"},
    {"GDCMSCU", "GDCM", "gdcmscu (3.0.21) has no option for TCP_NODELAY"},
    {"PYNETDICOM", "pynetdicom", "on the association's socket"},
    {"CT_SALLE_3", "unknown", "the sender's TCP_NODELAY option, if it has one"},
  };
  for (const Case& c : cases)
  {
    DiagnosisInput input = SenderStalling(50);
    input.cstoreSenders.push_back(SenderNamed("SILENT", 0));  // no gap at the timer: not listed
    input.cstoreSenders.insert(input.cstoreSenders.begin(), SenderNamed(c.aet, 50));
    const Diagnosis diagnosis = Diagnose(Merge(input));
    ASSERT_EQ(1u, diagnosis.findings.size()) << c.aet;
    const Finding& finding = diagnosis.findings[0];
    const std::string action = finding.fix.action;
    EXPECT_NE(std::string::npos, action.find(c.advice)) << c.aet << ": " << action;
    EXPECT_NE(std::string::npos, action.find(std::string("calling AET ") + c.aet)) << action;
    EXPECT_EQ(std::string::npos, action.find("cannot shorten")) << action;
    // A known sender's advice comes first, the general one after it for any other sender.
    EXPECT_NE(std::string::npos, action.find("if it has one")) << action;
    ASSERT_EQ(1u, finding.evidence["sendersSinceReset"].Size());
    EXPECT_EQ(c.software, finding.evidence["sendersSinceReset"][0]["software"].AsText());
  }

  // Nothing known of the sender (no labelled gaps): the general advice.
  DiagnosisInput input = SenderStalling(50);
  const Diagnosis diagnosis = Diagnose(Merge(input));
  ASSERT_EQ(1u, diagnosis.findings.size());
  EXPECT_NE(std::string::npos, diagnosis.findings[0].fix.action.find("the sender's TCP_NODELAY option, if it has one"));
}


TEST(SenderSoftware, OnlyTheDefaultCallingAetsOfKnownToolsAreNamed)
{
  EXPECT_EQ(SenderSoftware::Dcmtk, SenderSoftwareOfCallingAet("STORESCU"));
  EXPECT_EQ(SenderSoftware::Dcmtk, SenderSoftwareOfCallingAet("STORESCU  "));  // padded to even length
  EXPECT_EQ(SenderSoftware::Dcmtk, SenderSoftwareOfCallingAet("DCMSEND"));
  EXPECT_EQ(SenderSoftware::Orthanc, SenderSoftwareOfCallingAet("ORTHANC"));
  EXPECT_EQ(SenderSoftware::Gdcm, SenderSoftwareOfCallingAet("GDCMSCU"));
  EXPECT_EQ(SenderSoftware::Pynetdicom, SenderSoftwareOfCallingAet("PYNETDICOM"));
  for (const char* other : {"", " ", "STORE", "STORESCUX", "storescu", "CT_SALLE_3", "(other)", "aet-1a2b3c4d"})
  {
    EXPECT_EQ(SenderSoftware::Unknown, SenderSoftwareOfCallingAet(other)) << other;
  }
  for (size_t s = 0; s < kSenderSoftwareCount; s++)
  {
    EXPECT_STRNE("", SenderNoDelayAdvice(static_cast<SenderSoftware>(s)));
  }
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
