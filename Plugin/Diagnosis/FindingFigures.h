// The figures of a finding, as evidence and as text: the shared formatting of every rule, so that a
// phase, its split and its tail read the same in each finding (docs/diagnosis.md#the-answer).
#pragma once

#include "Diagnosis/DiagnosisInput.h"
#include "Diagnosis/Evidence.h"

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  // A namespace of its own: these short names (Round, Format, Names) are the diagnosis's, not the
  // plugin's.
  namespace FindingFigures
  {
    // A sentence of the rules' table whose parts are all figures: printf's conversions, doubles only.
    std::string Format(const char* format, double a = 0, double b = 0, double c = 0, double d = 0);

    // A figure or a name that a sentence of the rules' table takes: "%.1f" a number, "%s" a text.
    class SentencePart
    {
    public:
      SentencePart(double number) :
        number_(number)
      {
      }
      SentencePart(const char* text) :
        text_(text),
        isText_(true)
      {
      }
      SentencePart(std::string text) :
        text_(std::move(text)),
        isText_(true)
      {
      }

      // The part as the conversion spec asks ("%.1f", "%s"); a text where a number is asked is an error.
      std::string Convert(const std::string& spec) const;

    private:
      double number_ = 0;
      std::string text_;
      bool isText_ = false;
    };

    // A sentence of the rules' table with its parts, in order; a part too many or too few is an error
    // (std::logic_error), which the unit tests reach.
    std::string Say(const char* sentence, std::initializer_list<SentencePart> parts);

    double Round(double value, double step = 0.001);

    // part / whole, rounded, at most 1; -1 when the whole is unknown.
    double Share(double part, double whole);

    // {count, meanMs, p50Ms, p90Ms, p99Ms}
    Evidence PhaseEvidence(const PhaseFigures& phase);

    // The cycle, the one base of every finding's shareOfCycle: the mean time of one instance through
    // a transport, serverTotal plus the gap before it (C-STORE: associationGap; HTTP keep-alive:
    // requestGap), the means of "Where the time goes" on the page, whose bars add up to it.
    double CycleMs(const TransportFigures& transport);

    // The parts of a phase (on a CPU, waiting for one, blocked) are read from this many split instances.
    constexpr uint64_t kMinimumSplit = 5;

    bool PartsKnown(const PhaseFigures& phase);

    // The parts of a phase as evidence: the means over the split instances, in ms.
    Evidence PartsEvidence(const PhaseFigures& phase);

    // "71% blocked, 24% on a CPU, 5% waiting for a CPU (over 25 instances)", largest first.
    std::string PartsText(const PhaseFigures& phase);

    enum class Dominant
    {
      OnCpu,
      Waiting,
      Blocked
    };

    Dominant DominantPart(const PartFigures& parts);

    // What the split of a phase says of who holds it, for a verdict: "; 80% of it blocked (disk...)",
    // "; 80% of it on a CPU" or "; 80% of it waiting for a CPU"; "" when not split.
    std::string HeldBy(const PhaseFigures& phase, const std::string& blockedBy);

    // "mean 16.2 ms (p50 1.1, p90 45.0, p99 52.6)": a figure quoted with its tail, so that a mean
    // pulled up by a few long values and a short median are read together.
    std::string MeanAndTail(const PhaseFigures& phase);

    // "36-72 ms"
    std::string BandText(const GapBand& band);

    // "a, b, c", or "(none)".
    std::string Names(const std::vector<std::string>& names);

    Evidence NameList(const std::vector<std::string>& names);
  }
}
