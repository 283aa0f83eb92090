#include "Diagnosis/FindingFigures.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace IngestPerf::FindingFigures
{
  std::string Format(const char* format, double a, double b, double c, double d)
  {
    char text[512];
    std::snprintf(text, sizeof(text), format, a, b, c, d);
    return text;
  }


  std::string SentencePart::Convert(const std::string& spec) const
  {
    if (isText_ != (spec.back() == 's'))
    {
      throw std::logic_error("a sentence asks " + spec + " of " + (isText_ ? "the text " + text_ : "a number"));
    }
    return isText_ ? text_ : Format(spec.c_str(), number_);
  }


  std::string Say(const char* sentence, std::initializer_list<SentencePart> parts)
  {
    std::string text;
    auto next = parts.begin();
    for (const char* p = sentence; *p != '\0'; p++)
    {
      const char* percent = std::strchr(p, '%');
      text.append(p, percent != nullptr ? percent : p + std::strlen(p));
      if (percent == nullptr)
      {
        break;
      }
      p = percent;
      if (p[1] == '%')
      {
        text += '%';
        p++;
        continue;
      }
      const char* end = p + 1;
      while (*end != '\0' && std::strchr("fs", *end) == nullptr)
      {
        end++;
      }
      if (*end == '\0' || next == parts.end())
      {
        throw std::logic_error(std::string("too few parts for the sentence ") + sentence);
      }
      text += next->Convert(std::string(p, end + 1));
      next++;
      p = end;
    }
    if (next != parts.end())
    {
      throw std::logic_error(std::string("too many parts for the sentence ") + sentence);
    }
    return text;
  }


  double Round(double value, double step)
  {
    return std::round(value / step) * step;
  }


  double Share(double part, double whole)
  {
    return whole > 0 ? Round(std::min(1.0, part / whole), 0.001) : -1;
  }


  Evidence PhaseEvidence(const PhaseFigures& phase)
  {
    Evidence value;
    value["count"] = phase.count;
    value["meanMs"] = Round(phase.meanMs);
    value["p50Ms"] = Round(phase.p50Ms);
    value["p90Ms"] = Round(phase.p90Ms);
    value["p99Ms"] = Round(phase.p99Ms);
    return value;
  }


  double CycleMs(const TransportFigures& transport)
  {
    return transport[Phase::ServerTotal].meanMs + transport[Phase::AssociationGap].meanMs +
           transport[Phase::RequestGap].meanMs;
  }


  bool PartsKnown(const PhaseFigures& phase)
  {
    return phase.parts.sampled >= kMinimumSplit;
  }


  Evidence PartsEvidence(const PhaseFigures& phase)
  {
    const PartFigures& parts = phase.parts;
    Evidence value;
    value["splitInstances"] = parts.sampled;
    value["meanMs"] = Round(parts.meanMs);
    value["onCpuMs"] = Round(parts.onCpuMs);
    value["waitingForCpuMs"] = parts.runDelaySampled > 0 ? Evidence(Round(parts.waitingForCpuMs)) : Evidence();
    value["blockedMs"] = Round(parts.blockedMs);
    return value;
  }


  std::string PartsText(const PhaseFigures& phase)
  {
    const PartFigures& parts = phase.parts;
    std::vector<std::pair<double, const char*>> shares = {{parts.BlockedShare(), "blocked"},
                                                          {parts.OnCpuShare(), "on a CPU"}};
    if (parts.runDelaySampled > 0)
    {
      shares.push_back({parts.WaitingShare(), "waiting for a CPU"});
    }
    std::stable_sort(shares.begin(), shares.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string text;
    for (const auto& share : shares)
    {
      text += (text.empty() ? "" : ", ") + Format("%.0f%% ", 100 * share.first) + share.second;
    }
    return text + Format(" (over %.0f split instances)", double(parts.sampled));
  }


  Dominant DominantPart(const PartFigures& parts)
  {
    if (parts.waitingForCpuMs >= parts.onCpuMs && parts.waitingForCpuMs >= parts.blockedMs)
    {
      return Dominant::Waiting;
    }
    return parts.onCpuMs >= parts.blockedMs ? Dominant::OnCpu : Dominant::Blocked;
  }


  std::string HeldBy(const PhaseFigures& phase, const std::string& blockedBy)
  {
    if (!PartsKnown(phase))
    {
      return "";
    }
    switch (DominantPart(phase.parts))
    {
      case Dominant::Blocked:
        return Format("; %.0f%% of it blocked", 100 * phase.parts.BlockedShare()) + " (" + blockedBy + ")";
      case Dominant::OnCpu:
        return Format("; %.0f%% of it on a CPU", 100 * phase.parts.OnCpuShare());
      default:
        return Format("; %.0f%% of it waiting for a CPU", 100 * phase.parts.WaitingShare());
    }
  }


  std::string MeanAndTail(const PhaseFigures& phase)
  {
    return Format("mean %.1f ms (p50 %.1f, p90 %.1f, p99 %.1f)", phase.meanMs, phase.p50Ms, phase.p90Ms, phase.p99Ms);
  }


  std::string BandText(const GapBand& band)
  {
    return Format("%.0f-%.0f ms", band.fromMs, band.toMs);
  }


  std::string Names(const std::vector<std::string>& names)
  {
    std::string text;
    for (const std::string& name : names)
    {
      text += (text.empty() ? "" : ", ") + name;
    }
    return text.empty() ? std::string("(none)") : text;
  }


  Evidence NameList(const std::vector<std::string>& names)
  {
    Evidence list = Evidence::List();
    for (const std::string& name : names)
    {
      list.Append(name);
    }
    return list;
  }
}
