// The diagnosis: rules that name a bottleneck from the figures of DiagnosisInput. Each looks for the
// signature of one cause (docs/diagnosis.md), and when it finds it, writes a finding with the
// verdict, the figures it rests on, the change that removes it with the effect to expect, and how
// sure it is. Every rule also says why it did not fire, so an answer with no finding still shows
// what was checked against which figures. The rules are data (DiagnosisRuleTable.cpp); their
// predicates are run by RuleEvaluation.
#pragma once

#include "Diagnosis/DiagnosisInput.h"
#include "Diagnosis/Evidence.h"

#include <string>
#include <type_traits>
#include <utility>
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

  // A value a fix sets in Orthanc's configuration: true or false, a number, or a text for the reader
  // ("larger, or 0 for no limit").
  class ConfigurationValue
  {
  public:
    enum class Kind
    {
      Bool,
      Unsigned,
      Text
    };

    ConfigurationValue(bool value) :
      kind_(Kind::Bool),
      bool_(value)
    {
    }
    template <typename Integer,
              std::enable_if_t<std::is_unsigned_v<Integer> && !std::is_same_v<Integer, bool>, int> = 0>
    ConfigurationValue(Integer value) :
      kind_(Kind::Unsigned),
      unsigned_(value)
    {
    }
    ConfigurationValue(const char* text) :
      kind_(Kind::Text),
      text_(text)
    {
    }
    ConfigurationValue(std::string text) :
      kind_(Kind::Text),
      text_(std::move(text))
    {
    }

    Kind GetKind() const { return kind_; }
    // The value, or false, 0 or "" when it is of another kind.
    bool AsBool() const { return kind_ == Kind::Bool && bool_; }
    uint64_t AsUnsigned() const { return kind_ == Kind::Unsigned ? unsigned_ : 0; }
    const std::string& AsText() const { return text_; }

  private:
    Kind kind_;
    bool bool_ = false;
    uint64_t unsigned_ = 0;
    std::string text_;
  };

  // The change that removes a finding's cause: options of Orthanc's configuration to set, what to
  // do, and the effect to expect. An empty part is not part of the fix.
  struct Fix
  {
    std::vector<std::pair<std::string, ConfigurationValue>> configuration;  // key, value; in the order written
    std::string action;
    std::string effect;

    // The value set for the key, or nullptr.
    const ConfigurationValue* Find(const std::string& key) const;
  };

  struct Finding
  {
    std::string id;         // the rule, e.g. "cstore-answer-stall"
    std::string transport;  // "dicom", "rest", ... or "all"
    std::string verdict;    // one line
    CostKind costKind = CostKind::Measured;
    double costMsPerInstance = 0;            // meaningless when Unobservable
    double shareOfCycle = -1;                // of the transport's time per instance; -1 unknown
    uint64_t instancesLost = 0;              // instances not stored because of this cause (ranked first)
    Evidence evidence = Evidence::Object();  // name -> figure, with units in the names
    std::string explanation;                 // how the figures show the cause
    Fix fix;                                 // what to change, and what it gains
    std::string confidence;                  // "high", "medium", "low"
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
    std::vector<Finding>
      findings;  // instances lost, then cost per instance, most first; unobservable, then no cost, last
    std::vector<RuleCheck> checks;  // every rule, in the order of docs/diagnosis.md
  };

  // Below this many stored instances (or gaps, for the association rules), a rule does not judge.
  constexpr uint64_t kMinimumSamples = 10;

  Diagnosis Diagnose(const DiagnosisInput& input);

  // The ids of every rule, in order.
  std::vector<std::string> DiagnosisRuleIds();
}
