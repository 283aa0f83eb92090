#include "Export/DiagnosisExporter.h"

#include "Platform/JsonText.h"

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

  // jsoncpp's text puts an object or a non-empty array on the line after its name, which ends in
  // " : ": the space is written here rather than kept at the end of the expected text's lines.
  std::string WithSpaceAfterNames(std::string text)
  {
    for (size_t at = text.find(" :\n"); at != std::string::npos; at = text.find(" :\n", at + 4))
    {
      text.insert(at + 2, " ");
    }
    return text;
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


TEST(DiagnosisExporter, WritesEveryKindOfEvidenceAsItAlwaysHas)
{
  PluginStatus status;
  status.pluginVersion = "1.0";
  status.orthancVersion = "1.12.7";
  DiagnosisInput input = WithRestInstances(40);
  input.seconds = 300;
  Finding rich = MakeFinding("slow-index", CostKind::Measured, 4.25);
  rich.transport = "rest";
  rich.shareOfCycle = 0.5;
  rich.instancesLost = 3;
  // Inserted out of order: the answer lists the names sorted, capitals first.
  rich.evidence["zeta"] = uint64_t(7);
  rich.evidence["connectionsNow"] = int64_t(-2);
  rich.evidence["Alpha"] = "SQLite \"index\"";
  rich.evidence["cycleMs"] = 12.34567;
  rich.evidence["whole"] = 3.0;
  rich.evidence["inEffect"] = false;
  rich.evidence["storagePlugin"] = Evidence();
  rich.evidence["serverTotal"]["p50Ms"] = 2.5;
  rich.evidence["serverTotal"]["count"] = uint64_t(40);
  Evidence& senders = rich.evidence["senders"];
  senders = Evidence::List();
  Evidence row;
  row["remoteAet"] = "CT";
  row["gaps"] = uint64_t(5);
  senders.Append(row);
  senders.Append("text in a list");
  rich.evidence["none"] = Evidence::List();
  rich.fix.configuration = {
    {"MaximumStorageSize", "larger, or 0 for no limit"}, {"DicomThreadsCount", 8u}, {"IngestPerf.TimedStorage", true}};
  rich.fix.action = "Do it";
  rich.fix.effect = "Faster";
  Diagnosis diagnosis;
  diagnosis.findings = {rich, MakeFinding("compressed-answers", CostKind::Unobservable, 0)};
  MappedText text;
  WriteJsonText(text, ExportDiagnosis(diagnosis, input, status));
  EXPECT_EQ(WithSpaceAfterNames(R"({
  "activeSeconds" : 2.0,
  "documentation" : "docs/diagnosis.md",
  "findings" :
  [
    {
      "confidence" : "",
      "confidenceReason" : "",
      "cost" : "measured",
      "costMsPerInstance" : 4.25,
      "evidence" :
      {
        "Alpha" : "SQLite \"index\"",
        "connectionsNow" : -2,
        "cycleMs" : 12.3457,
        "inEffect" : false,
        "none" : [],
        "senders" :
        [
          {
            "gaps" : 5,
            "remoteAet" : "CT"
          },
          "text in a list"
        ],
        "serverTotal" :
        {
          "count" : 40,
          "p50Ms" : 2.5
        },
        "storagePlugin" : null,
        "whole" : 3.0,
        "zeta" : 7
      },
      "explanation" : "",
      "fix" :
      {
        "action" : "Do it",
        "configuration" :
        {
          "DicomThreadsCount" : 8,
          "IngestPerf.TimedStorage" : true,
          "MaximumStorageSize" : "larger, or 0 for no limit"
        },
        "effect" : "Faster"
      },
      "id" : "slow-index",
      "instancesLost" : 3,
      "shareOfCycle" : 0.5,
      "transport" : "rest",
      "verdict" : "verdict of slow-index"
    },
    {
      "confidence" : "",
      "confidenceReason" : "",
      "cost" : "unobservable",
      "costMsPerInstance" : null,
      "evidence" : {},
      "explanation" : "",
      "fix" : {},
      "id" : "compressed-answers",
      "shareOfCycle" : null,
      "transport" : "",
      "verdict" : "verdict of compressed-answers"
    }
  ],
  "orthancVersion" : "1.12.7",
  "plugin" : "ingest-perf",
  "reason" : "",
  "rules" : [],
  "seconds" : 300.0,
  "sinceReset" :
  {
    "firstStored" : null,
    "lastStored" : null,
    "lastStoredSecondsAgo" : null,
    "since" : "1970-01-01T00:00:00.000Z",
    "stored" : 0
  },
  "state" : "running",
  "summary" :
  {
    "rest" :
    {
      "instancesPerSecond" : 20.0,
      "serverTotalMs" :
      {
        "mean" : 0.0,
        "p50" : 2.75,
        "p99" : 0.0
      },
      "stored" : 40
    }
  },
  "verdict" : "verdict of slow-index",
  "version" : "1.0",
  "window" : "5m"
})"),
            std::string(text.Data(), text.Size()));
}
