// The rules that name a bottleneck from the figures of DiagnosisInput: each rule looks for the
// signature of one cause (docs/diagnosis.md), and when it finds it, writes a finding with the
// verdict, the figures it rests on, the change that removes it with the effect measured on a
// 2-core machine, and how sure it is. Every rule also says why it did not fire, so an answer with
// no finding still shows what was checked against which figures.
#pragma once

#include "Diagnosis/DiagnosisInput.h"

#include <json/value.h>

#include <string>
#include <vector>

namespace IngestPerf
{
  enum class CostKind
  {
    Measured,     // the time of a measured phase, per instance
    Estimated,    // derived from measured figures by a stated rule
    Unobservable  // no plugin can time it: the finding rests on counts and configuration
  };

  const char* CostKindName(CostKind kind);

  struct Finding
  {
    std::string id;         // the rule, e.g. "cstore-answer-stall"
    std::string transport;  // "dicom", "rest", ... or "all"
    std::string verdict;    // one line
    CostKind costKind = CostKind::Measured;
    double costMsPerInstance = 0;              // meaningless when Unobservable
    double shareOfCycle = -1;                  // of the transport's time per instance; -1 unknown
    uint64_t instancesLost = 0;                // instances not stored because of this cause (ranked first)
    Json::Value evidence = Json::objectValue;  // name -> figure, with units in the names
    std::string explanation;                   // how the figures show the cause
    Json::Value fix = Json::objectValue;       // "configuration" {key: value} and/or "action", "effect"
    std::string confidence;                    // "high", "medium", "low"
    std::string confidenceReason;
  };

  struct RuleCheck
  {
    std::string id;
    bool fired = false;
    std::string reason;  // what it saw, fired or not
  };

  struct Diagnosis
  {
    std::vector<Finding> findings;  // by cost per instance, most first; unobservable costs last
    std::vector<RuleCheck> checks;  // every rule, in the order of docs/diagnosis.md
  };

  // Below this many stored instances (or gaps, for the association rules), a rule does not judge.
  constexpr uint64_t kMinimumSamples = 10;

  Diagnosis Diagnose(const DiagnosisInput& input);

  // The ids of every rule, in order.
  std::vector<std::string> DiagnosisRuleIds();
}
