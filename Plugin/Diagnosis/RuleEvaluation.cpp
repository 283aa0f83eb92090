#include "Diagnosis/RuleEvaluation.h"

#include "Diagnosis/FindingFigures.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace IngestPerf
{
  using namespace FindingFigures;

  namespace
  {
    const char* FindSentence(const std::vector<RuleSentence>& sentences, const char* name)
    {
      for (const RuleSentence& sentence : sentences)
      {
        if (std::strcmp(sentence.name, name) == 0)
        {
          return sentence.text;
        }
      }
      return nullptr;
    }
  }


  double RuleEntry::Threshold(const char* name) const
  {
    for (const RuleThreshold& threshold : thresholds)
    {
      if (std::strcmp(threshold.name, name) == 0)
      {
        return threshold.value;
      }
    }
    throw std::logic_error(std::string("the rule ") + id + " has no threshold " + name);
  }


  const char* RuleEntry::Text(const char* name) const
  {
    const char* text = FindSentence(sentences, name);
    text = text != nullptr ? text : FindSentence(SharedSentences(), name);
    if (text == nullptr)
    {
      throw std::logic_error(std::string("the rule ") + id + " has no sentence " + name);
    }
    return text;
  }


  std::string RuleEntry::MeasuredEffect(const std::string& effect) const
  {
    return *measurement == '\0' ? effect : effect + " (" + measurement + ")";
  }


  const RuleEntry& RuleEntryOf(const char* id)
  {
    for (const RuleEntry& rule : DiagnosisRuleTable())
    {
      if (std::strcmp(rule.id, id) == 0)
      {
        return rule;
      }
    }
    throw std::logic_error(std::string("no rule ") + id);
  }


  const char* SharedSentence(const char* name)
  {
    const char* text = FindSentence(SharedSentences(), name);
    if (text == nullptr)
    {
      throw std::logic_error(std::string("no shared sentence ") + name);
    }
    return text;
  }


  RuleEvaluation::RuleEvaluation(const DiagnosisInput& input) :
    input_(input),
    dicom_(input.transports[static_cast<size_t>(Transport::Dicom)]),
    rest_(input.transports[static_cast<size_t>(Transport::Rest)])
  {
  }


  Diagnosis RuleEvaluation::Run()
  {
    // The C-STORE rules exclude each other: workers first (it makes every gap long), then the stall's
    // signature, then any long gap.
    const bool saturated = DicomWorkersSaturated();
    bool stalled = false;
    if (saturated)
    {
      const RuleEntry& stall = RuleEntryOf("cstore-answer-stall");
      Check(stall, false, stall.Text("explainedByWorkers"));
    }
    else
    {
      stalled = CStoreAnswerStall();
    }
    // The site's ReceivedInstanceCallback, held by it, ends the gaps at the instance filter, after that
    // callback: its time is in every gap, which then says nothing of the sender's timer.
    const bool senderStalled = SenderStall(saturated || stalled || SiteHoldsReceivedInstanceCallback());
    const bool received = SiteReceivedInstanceCallback();
    SlowSender(saturated || stalled || senderStalled || received);
    HttpThreadsSaturated();
    WaitingForCpu();
    const bool transcoding = TranscodingBound();
    SiteCallbacks();
    StorageBound(CStoreFilters());
    IndexBound();
    SlowChangeConsumer();
    SlowFilters(transcoding);
    SlowUploads(LuaLock() || received);
    SlowHttpClient();
    CompressedAnswers();
    RejectedOrDuplicate();
    StoresFailing();
    UnreadableInstances();

    // Instances lost first, most lost first; then the cost per instance; unobservable costs, then what
    // costs Orthanc nothing (a rare unreadable instance, the client's) last.
    const auto tier = [](const Finding& f) {
      return f.costKind == CostKind::Unobservable ? 1 : f.instancesLost == 0 && f.costMsPerInstance <= 0 ? 2 : 0;
    };
    std::stable_sort(result_.findings.begin(), result_.findings.end(), [&](const Finding& a, const Finding& b) {
      if (a.instancesLost != b.instancesLost)
      {
        return a.instancesLost > b.instancesLost;
      }
      if (tier(a) != tier(b))
      {
        return tier(a) < tier(b);
      }
      return a.costMsPerInstance > b.costMsPerInstance;
    });
    return result_;
  }


  void RuleEvaluation::Check(const RuleEntry& rule, bool fired, const std::string& reason)
  {
    result_.checks.push_back(RuleCheck{rule.id, fired, reason});
  }


  Finding& RuleEvaluation::Add(const RuleEntry& rule, const char* transport, double costMs, CostKind kind,
                               double cycleMs)
  {
    Finding finding;
    finding.id = rule.id;
    finding.transport = transport;
    finding.costKind = kind;
    finding.costMsPerInstance = kind == CostKind::Unobservable ? 0 : Round(costMs);
    finding.shareOfCycle = kind == CostKind::Unobservable ? -1 : Share(costMs, cycleMs);
    result_.findings.push_back(finding);
    return result_.findings.back();
  }


  void RuleEvaluation::Describe(Finding& f, const RuleEntry& rule, const char* confidence, const char* reason)
  {
    f.explanation = rule.Text("explanation");
    f.fix.action = rule.Text("action");
    f.fix.effect = rule.MeasuredEffect(rule.Text("effect"));
    f.confidence = confidence;
    f.confidenceReason = rule.Text(reason);
  }


  double RuleEvaluation::AllCycleMs() const
  {
    double sum = 0;
    uint64_t count = 0;
    for (const TransportFigures& transport : input_.transports)
    {
      const uint64_t instances = transport[Phase::ServerTotal].count;
      sum += CycleMs(transport) * static_cast<double>(instances);
      count += instances;
    }
    return count > 0 ? sum / static_cast<double>(count) : input_.all[Phase::ServerTotal].meanMs;
  }


  bool RuleEvaluation::PythonRegisters(const char* hook) const
  {
    const std::vector<std::string>& hooks = input_.configuration.pythonCallbacks;
    return std::find(hooks.begin(), hooks.end(), hook) != hooks.end();
  }


  std::string RuleEvaluation::PythonText(const char* hook) const
  {
    return PythonRegisters(hook) ? Say(SharedSentence("pythonRegisters"), {hook}) : "";
  }


  std::vector<std::string> RuleEvaluation::AllOtherPlugins() const
  {
    std::vector<std::string> all = input_.pluginsBefore;
    all.insert(all.end(), input_.pluginsAfter.begin(), input_.pluginsAfter.end());
    return all;
  }


  // onStoredWait is measured for the instances whose change came first, so its mean stands for those
  // only; spread over every instance stored.
  double RuleEvaluation::OnStoredWaitPerInstanceMs(const TransportFigures& figures) const
  {
    const PhaseFigures& wait = figures[Phase::OnStoredWait];
    const uint64_t persisted = figures[Phase::Persist].count;
    return persisted == 0 ? 0.0 : wait.meanMs * static_cast<double>(wait.count) / static_cast<double>(persisted);
  }


  std::string RuleEvaluation::Scope() const
  {
    return input_.window == "sinceReset" ? std::string(SharedSentence("scopeSinceReset"))
                                         : Say(SharedSentence("scopeIn"), {WindowText(input_.window)});
  }


  const char* CostKindName(CostKind kind)
  {
    switch (kind)
    {
      case CostKind::Estimated:
        return "estimated";
      case CostKind::Unobservable:
        return "unobservable";
      default:
        return "measured";
    }
  }


  const ConfigurationValue* Fix::Find(const std::string& key) const
  {
    for (const auto& [name, value] : configuration)
    {
      if (name == key)
      {
        return &value;
      }
    }
    return nullptr;
  }


  Diagnosis Diagnose(const DiagnosisInput& input)
  {
    return RuleEvaluation(input).Run();
  }


  std::vector<std::string> DiagnosisRuleIds()
  {
    DiagnosisInput empty;
    std::vector<std::string> ids;
    for (const RuleCheck& check : Diagnose(empty).checks)
    {
      ids.push_back(check.id);
    }
    return ids;
  }
}
