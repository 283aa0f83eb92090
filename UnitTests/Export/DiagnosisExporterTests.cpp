#include "Export/DiagnosisExporter.h"

#include <gtest/gtest.h>

using namespace IngestPerf;

namespace
{
  DiagnosisInput WithRestInstances(uint64_t stored)
  {
    DiagnosisInput input;
    input.window = "5m";
    input.activeSeconds = 2;
    TransportFigures& rest = input.transports[static_cast<size_t>(Transport::Rest)];
    rest.stored = stored;
    rest.phases[static_cast<size_t>(Phase::ServerTotal)].count = stored;
    rest.phases[static_cast<size_t>(Phase::ServerTotal)].p50Ms = 2.75;
    return input;
  }

  Finding MakeFinding(const char* id, CostKind kind, double cost)
  {
    Finding finding;
    finding.id = id;
    finding.verdict = std::string("verdict of ") + id;
    finding.costKind = kind;
    finding.costMsPerInstance = cost;
    return finding;
  }
}


TEST(DiagnosisExporter, TheVerdictIsTheCostliestMeasuredFinding)
{
  PluginStatus status;
  Diagnosis diagnosis;
  diagnosis.findings = {MakeFinding("slow-uploads", CostKind::Measured, 90),
                        MakeFinding("compressed-answers", CostKind::Unobservable, 0)};
  const Json::Value answer = ExportDiagnosis(diagnosis, WithRestInstances(40), status);
  EXPECT_EQ("verdict of slow-uploads", answer["verdict"].asString());
  ASSERT_EQ(2u, answer["findings"].size());
  EXPECT_TRUE(answer["findings"][1]["costMsPerInstance"].isNull());
  EXPECT_EQ("unobservable", answer["findings"][1]["cost"].asString());
  EXPECT_EQ(20.0, answer["summary"]["rest"]["instancesPerSecond"].asDouble());
}


TEST(DiagnosisExporter, AFindingWithoutAMeasurableCostMakesNoVerdict)
{
  PluginStatus status;
  Diagnosis diagnosis;
  diagnosis.findings = {MakeFinding("compressed-answers", CostKind::Unobservable, 0)};
  const std::string verdict = ExportDiagnosis(diagnosis, WithRestInstances(40), status)["verdict"].asString();
  EXPECT_EQ("Nothing stands out: rest: 40 stored, serverTotal p50 2.8 ms (a finding without a measurable cost: "
            "compressed-answers)",
            verdict);

  diagnosis.findings.clear();
  EXPECT_EQ("Nothing to diagnose: no instance stored since 1970-01-01T00:00:00.000Z",
            ExportDiagnosis(diagnosis, WithRestInstances(0), status)["verdict"].asString());
}


TEST(DiagnosisExporter, AnIdleWindowSaysWhatWasStoredBeforeIt)
{
  PluginStatus status;
  DiagnosisInput input = WithRestInstances(0);
  input.window = "5m";
  input.sinceReset.sinceWallNs = 1795000000000000000LL;
  input.sinceReset.stored = 500;
  input.sinceReset.firstStoredWallNs = 1795000001000000000LL;
  input.sinceReset.lastStoredWallNs = 1795000600500000000LL;
  input.sinceReset.nowWallNs = 1795001000000000000LL;
  const Json::Value answer = ExportDiagnosis(Diagnosis(), input, status);
  EXPECT_EQ("No instance stored in the last 5 minutes; 500 stored since 2026-11-18T11:06:40.000Z, the last at "
            "2026-11-18T11:16:40.500Z",
            answer["verdict"].asString());
  EXPECT_EQ(500u, answer["sinceReset"]["stored"].asUInt64());
  EXPECT_EQ(399.5, answer["sinceReset"]["lastStoredSecondsAgo"].asDouble());
  EXPECT_EQ("running", answer["state"].asString());
}


TEST(DiagnosisExporter, ADisabledOrInertPluginSaysSoFirst)
{
  PluginStatus status;
  status.state = PluginState::Disabled;
  status.stateReason = "IngestPerf.Enable is false";
  Diagnosis diagnosis;
  diagnosis.findings = {MakeFinding("slow-uploads", CostKind::Measured, 3)};
  Json::Value answer = ExportDiagnosis(diagnosis, WithRestInstances(0), status);
  EXPECT_EQ("disabled", answer["state"].asString());
  EXPECT_EQ(0u, answer["verdict"].asString().find("The plugin is disabled (IngestPerf.Enable is false)"));
  status.state = PluginState::Inert;
  status.stateReason = "invalid configuration: IngestPerf.MaxThreads: expected an integer from 1 to 65536, got 0";
  answer = ExportDiagnosis(diagnosis, WithRestInstances(0), status);
  EXPECT_EQ("inert", answer["state"].asString());
  EXPECT_EQ(0u, answer["verdict"].asString().find("The plugin is inert: invalid configuration: IngestPerf.MaxThreads"));
}
