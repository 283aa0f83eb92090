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
  EXPECT_EQ("Nothing to diagnose: no instance stored in the window",
            ExportDiagnosis(diagnosis, WithRestInstances(0), status)["verdict"].asString());
}
