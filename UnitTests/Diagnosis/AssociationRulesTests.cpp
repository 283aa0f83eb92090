// The C-STORE rules: the answer stall, the sender's stall, the DICOM workers.
#include "RulesTestInputs.h"
#include "Metrics/Histogram.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <utility>
#include <vector>

using namespace IngestPerf;
using namespace IngestPerf::RulesTests;


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


namespace
{
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
