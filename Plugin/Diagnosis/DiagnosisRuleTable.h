// The rules of the diagnosis as data: one entry per rule, with the figures it reads, the thresholds
// of its predicate, the evidence its finding writes and every sentence it says (verdict, explanation,
// fix, expected effect, confidence, and why it did not fire). The predicates (AssociationRules,
// StoreRules, HttpRules, OutcomeRules) decide and fill the figures in; the words are only here.
#pragma once

#include <string>
#include <vector>

namespace IngestPerf
{
  struct RuleThreshold
  {
    const char* name;
    double value;
  };

  // A sentence with a conversion per part, "%.1f" for a figure and "%s" for a name or a phrase, which
  // the predicate fills in order (Say, FindingFigures.h).
  struct RuleSentence
  {
    const char* name;
    const char* text;
  };

  struct RuleEntry
  {
    const char* id;
    const char* needs;                      // the figures the predicate reads
    std::vector<RuleThreshold> thresholds;  // the predicate's, by name
    std::vector<const char*> evidence;      // the fields of its finding's evidence
    std::vector<RuleSentence> sentences;
    const char* measurement;  // where the expected effect was measured, or ""

    // The threshold or sentence of that name; a name the table lacks is a programming error
    // (std::logic_error), which the unit tests reach.
    double Threshold(const char* name) const;
    const char* Text(const char* name) const;
    // The effect sentence of that name with the link to its measurement.
    std::string MeasuredEffect(const std::string& effect) const;
  };

  // Every rule, in the order they are checked (the answer's "rules").
  const std::vector<RuleEntry>& DiagnosisRuleTable();

  // The sentences several rules share ("since the reset", "not judged: ..."); a rule's own sentence of
  // the same name comes first.
  const std::vector<RuleSentence>& SharedSentences();

  const RuleEntry& RuleEntryOf(const char* id);

  const char* SharedSentence(const char* name);
}
