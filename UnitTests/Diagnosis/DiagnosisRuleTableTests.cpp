#include "Diagnosis/DiagnosisRuleTable.h"
#include "Diagnosis/DiagnosisRules.h"
#include "Diagnosis/FindingFigures.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <stdexcept>
#include <string>

using namespace IngestPerf;
using FindingFigures::Say;

namespace
{
  bool StartsWith(const std::string& text, const std::string& prefix)
  {
    return text.compare(0, prefix.size(), prefix) == 0;
  }

  // Say fills a sentence with numbers ("%.1f") and texts ("%s") only.
  bool ConvertsNumbersAndTexts(const std::string& text)
  {
    static const std::regex conversion("%(%|\\.[0-9]f|s)");
    const std::string rest = std::regex_replace(text, conversion, "");
    return rest.find('%') == std::string::npos;
  }
}


TEST(DiagnosisRuleTable, EveryRuleCheckedHasOneEntry)
{
  std::set<std::string> table;
  for (const RuleEntry& rule : DiagnosisRuleTable())
  {
    EXPECT_TRUE(table.insert(rule.id).second) << rule.id << " twice";
  }
  const std::vector<std::string> checked = DiagnosisRuleIds();
  EXPECT_EQ(table, std::set<std::string>(checked.begin(), checked.end()));
  EXPECT_EQ(table.size(), checked.size());
}


TEST(DiagnosisRuleTable, EveryEntrySaysWhatItReadsAndWhatToExpect)
{
  for (const RuleEntry& rule : DiagnosisRuleTable())
  {
    EXPECT_NE(std::string(), rule.needs) << rule.id;
    EXPECT_FALSE(rule.evidence.empty()) << rule.id;
    std::set<std::string> names;
    bool effect = false;
    bool verdict = false;
    for (const RuleSentence& sentence : rule.sentences)
    {
      const std::string name = sentence.name;
      const std::string text = sentence.text;
      EXPECT_TRUE(names.insert(name).second) << rule.id << ": " << name << " twice";
      EXPECT_TRUE(ConvertsNumbersAndTexts(text)) << rule.id << ": " << text;
      verdict = verdict || StartsWith(name, "verdict");
      if (StartsWith(name, "effect"))
      {
        effect = true;
        // What to expect, not a fact measured once; or that nothing in Orthanc can be expected.
        EXPECT_TRUE(text.find("xpect") != std::string::npos || StartsWith(text, "not measurable") ||
                    StartsWith(text, "none by itself"))
          << rule.id << ": " << text;
      }
    }
    EXPECT_TRUE(effect) << rule.id;
    EXPECT_TRUE(verdict) << rule.id;
    std::set<std::string> thresholds;
    for (const RuleThreshold& threshold : rule.thresholds)
    {
      EXPECT_TRUE(thresholds.insert(threshold.name).second) << rule.id << ": " << threshold.name << " twice";
    }
    const std::string measurement = rule.measurement;
    EXPECT_TRUE(measurement.empty() || StartsWith(measurement, "docs/")) << rule.id;
  }
  for (const RuleSentence& sentence : SharedSentences())
  {
    EXPECT_TRUE(ConvertsNumbersAndTexts(sentence.text)) << sentence.text;
  }
}


TEST(DiagnosisRuleTable, AMeasuredEffectLinksItsMeasurement)
{
  const RuleEntry& rule = RuleEntryOf("transcoding-bound");
  EXPECT_EQ("Expect x (docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after)",
            rule.MeasuredEffect("Expect x"));
  EXPECT_EQ("Expect y", RuleEntryOf("slow-uploads").MeasuredEffect("Expect y"));
}


TEST(DiagnosisRuleTable, ANameTheTableLacksIsAnError)
{
  const RuleEntry& rule = RuleEntryOf("sender-stall");
  EXPECT_EQ(0.25, rule.Threshold("shareOfGapTime"));
  EXPECT_THROW(rule.Threshold("noSuchThreshold"), std::logic_error);
  EXPECT_THROW(rule.Text("noSuchSentence"), std::logic_error);
  EXPECT_THROW(RuleEntryOf("no-such-rule"), std::logic_error);
  // A sentence several rules share is found from any of them.
  EXPECT_STREQ(SharedSentence("explainedAbove"), rule.Text("explainedAbove"));
}


TEST(DiagnosisRuleTable, SayFillsASentenceWithItsPartsInOrder)
{
  EXPECT_EQ("80% of the gaps at one timer (36-72 ms); p50 9.9 ms",
            Say("%.0f%% of the gaps at one timer (%s); p50 %.1f ms", {80.2, "36-72 ms", 9.87}));
  EXPECT_EQ("no figure", Say("no figure", {}));
  EXPECT_THROW(Say("%.0f and %.0f", {1.0}), std::logic_error);
  EXPECT_THROW(Say("%.0f", {1.0, 2.0}), std::logic_error);
  EXPECT_THROW(Say("%.0f ms", {"a text"}), std::logic_error);
  EXPECT_THROW(Say("%s", {1.0}), std::logic_error);
}
