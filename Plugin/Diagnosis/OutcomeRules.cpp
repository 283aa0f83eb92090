// The predicates of the rules on what was not stored: the instances Orthanc lost, those it could not
// read, and the duplicates and rejections (docs/diagnosis.md#stores-failing, #unreadable-instances,
// #rejected-or-duplicate). A lost instance ranks before any latency.
#include "Diagnosis/FindingFigures.h"
#include "Diagnosis/RuleEvaluation.h"

namespace IngestPerf
{
  using namespace FindingFigures;

  namespace
  {
    // Failures that are Orthanc's (the write, the index, the disk, the quota) or, with `unreadable`,
    // those before the instance filters (what Orthanc could not read, or a filter before them refused).
    uint64_t FailuresOf(const TransportFigures& figures, bool unreadable)
    {
      const uint64_t before = figures.Failures(FailureReason::BeforeFilters);
      return unreadable ? before : figures.Outcomes(Outcome::Failed) - before;
    }

    uint64_t FailuresOf(const FailingSender& sender, bool unreadable)
    {
      const uint64_t before = sender.reasons[static_cast<size_t>(FailureReason::BeforeFilters)];
      return unreadable ? before : sender.failed - before;
    }

    uint64_t Received(const TransportFigures& figures)
    {
      uint64_t received = 0;
      for (uint64_t n : figures.outcomes)
      {
        received += n;
      }
      return received;
    }
  }


  // The sender with the most of these failures since the reset, in a sentence of its own (the
  // labelled streams keep no window); "" when none is known.
  std::string RuleEvaluation::MostFrom(bool unreadable) const
  {
    const FailingSender* most = nullptr;
    for (const FailingSender& sender : input_.failingSenders)
    {
      if (FailuresOf(sender, unreadable) > (most != nullptr ? FailuresOf(*most, unreadable) : 0))
      {
        most = &sender;
      }
    }
    if (most == nullptr)
    {
      return "";
    }
    const RuleEntry& rule = RuleEntryOf(unreadable ? "unreadable-instances" : "stores-failing");
    const bool dicom = most->transport == Transport::Dicom;
    const bool address = !most->remoteIp.empty() && most->remoteIp != "(none)";
    const std::string who = dicom     ? (address ? Say(rule.Text("fromAetAt"), {most->remoteAet, most->remoteIp})
                                                 : Say(rule.Text("fromAet"), {most->remoteAet}))
                            : address ? Say(rule.Text("fromAddress"), {most->remoteIp, TransportName(most->transport)})
                                      : Say(rule.Text("fromUnknown"), {TransportName(most->transport)});
    return Say(rule.Text("mostFrom"), {who, double(FailuresOf(*most, unreadable))});
  }


  // The transport with the most of these failures, or "all" when several have some.
  const char* RuleEvaluation::FailingTransport(bool unreadable, uint64_t failed) const
  {
    size_t worst = 0;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      if (FailuresOf(input_.transports[t], unreadable) > FailuresOf(input_.transports[worst], unreadable))
      {
        worst = t;
      }
    }
    return failed != FailuresOf(input_.transports[worst], unreadable) ? "all"
                                                                      : TransportName(static_cast<Transport>(worst));
  }


  void RuleEvaluation::AddFailureEvidence(Finding& f, bool unreadable) const
  {
    Evidence& senders = f.evidence["failedBySenderSinceReset"];
    senders = Evidence::List();
    size_t listed = 0;
    for (const FailingSender& sender : input_.failingSenders)
    {
      if (FailuresOf(sender, unreadable) == 0 || listed == 10)
      {
        continue;
      }
      listed++;
      Evidence row;
      row["transport"] = TransportName(sender.transport);
      row["remoteAet"] = sender.remoteAet;
      row["remoteIp"] = sender.remoteIp;
      row["failed"] = FailuresOf(sender, unreadable);
      for (size_t r = 0; r < kFailureReasonCount; r++)
      {
        if (sender.reasons[r] != 0 && (r == static_cast<size_t>(FailureReason::BeforeFilters)) == unreadable)
        {
          row["byReason"][DefinitionOf(static_cast<FailureReason>(r)).name] = sender.reasons[r];
        }
      }
      senders.Append(std::move(row));
    }
    for (size_t t = 0; t < kTransportCount; t++)
    {
      if (FailuresOf(input_.transports[t], unreadable) != 0)
      {
        f.evidence["failedByTransport"][TransportName(static_cast<Transport>(t))] =
          FailuresOf(input_.transports[t], unreadable);
      }
    }
  }


  void RuleEvaluation::RejectedOrDuplicate()
  {
    static const RuleEntry& rule = RuleEntryOf("rejected-or-duplicate");
    const TransportFigures& all = input_.all;
    const uint64_t duplicates = all.Outcomes(Outcome::AlreadyStored);
    // Failed stores are stores-failing's: these are the instances Orthanc was not meant to keep.
    const uint64_t rejected = all.Outcomes(Outcome::NotDicom) + all.Outcomes(Outcome::Rejected);
    const uint64_t total = Received(all);
    const double share = total > 0 ? static_cast<double>(duplicates + rejected) / double(total) : 0;
    const bool fired =
      double(duplicates + rejected) >= rule.Threshold("minimumInstances") && share >= rule.Threshold("shareOfReceived");
    Check(rule, fired, Format(rule.Text("seen"), double(duplicates), double(rejected), double(total)));
    if (!fired)
    {
      return;
    }
    const PhaseFigures& server = all[Phase::ServerTotal];
    // A duplicate costs a whole store; a rejected instance at most its parsing, not counted. From 1.13.0
    // Orthanc answers a duplicate after a lookup, before the filters, and no hook marks the answer.
    const bool early = input_.configuration.duplicatesBeforeFilters;
    const double cost =
      !early && all.stored > 0 ? server.meanMs * static_cast<double>(duplicates) / static_cast<double>(all.stored) : 0;
    Finding& f = Add(rule, "all", cost, early ? CostKind::Unobservable : CostKind::Estimated, AllCycleMs());
    f.verdict = Format(rule.Text("verdict"), share * 100, double(duplicates), double(rejected));
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      f.evidence["outcomes"][DefinitionOf(static_cast<Outcome>(o)).name] = all.outcomes[o];
    }
    const Configuration& configuration = input_.configuration;
    if (configuration.overwriteInstancesMode.empty())
    {
      f.evidence["OverwriteInstances"] = configuration.overwriteInstances;
    }
    else
    {
      f.evidence["OverwriteInstances"] = configuration.overwriteInstancesMode;  // 1.13's modes, as configured
    }
    f.evidence["serverTotal"] = PhaseEvidence(server);
    Describe(f, rule, "high", "confidence");
    if (early)
    {
      f.explanation = rule.Text("explanationBeforeFilters");
      f.fix.effect = rule.Text("effectBeforeFilters");
    }
  }


  // Orthanc failed to store what it was given: the write, the index, the disk or the quota. What it
  // could not read, or what a filter before the instance filters refused, is unreadable-instances'.
  void RuleEvaluation::StoresFailing()
  {
    static const RuleEntry& rule = RuleEntryOf("stores-failing");
    const TransportFigures& all = input_.all;
    const uint64_t failed = FailuresOf(all, false);
    const uint64_t stored = all.stored + all.Outcomes(Outcome::AlreadyStored);
    if (failed == 0)
    {
      Check(rule, false, Format(rule.Text("notFired"), double(stored), double(FailuresOf(all, true))));
      return;
    }
    Check(rule, true, Format(rule.Text("fired"), double(failed), double(stored)));
    FailureReason main = FailureReason::AfterFilters;
    for (size_t r = 0; r < kFailureReasonCount; r++)
    {
      if (r != static_cast<size_t>(FailureReason::BeforeFilters) &&
          all.failures[r] > all.failures[static_cast<size_t>(main)])
      {
        main = static_cast<FailureReason>(r);
      }
    }
    Finding& f = Add(rule, FailingTransport(false, failed), 0, CostKind::Measured, -1);
    f.instancesLost = failed;
    f.shareOfCycle = -1;
    const double share = static_cast<double>(failed) / static_cast<double>(failed + stored);
    // Every failure a C-STORE one ended after the filters, where the site's script registers a C-STORE
    // filter: its refusals look the same as a failed write or index without the timed storage.
    const TransportFigures& dicom = input_.transports[static_cast<size_t>(Transport::Dicom)];
    const bool maybeRefused = all.failures[static_cast<size_t>(FailureReason::AfterFilters)] == failed &&
                              FailuresOf(dicom, false) == failed && PythonRegisters("IncomingCStoreInstanceFilter");
    if (maybeRefused)
    {
      const uint64_t dicomStores = failed + dicom.stored + dicom.Outcomes(Outcome::AlreadyStored);
      f.verdict = Say(rule.Text("verdictRefused"), {double(failed), double(dicomStores), Scope(),
                                                    100.0 * double(failed) / double(dicomStores), MostFrom(false)});
    }
    else
    {
      f.verdict = Say(rule.Text("verdict"), {double(failed), double(failed + stored), Scope(), share * 100,
                                             DefinitionOf(main).name, MostFrom(false)});
    }
    for (size_t r = 0; r < kFailureReasonCount; r++)
    {
      if (all.failures[r] != 0 && r != static_cast<size_t>(FailureReason::BeforeFilters))
      {
        f.evidence["failedByReason"][DefinitionOf(static_cast<FailureReason>(r)).name] = all.failures[r];
      }
    }
    f.evidence["failed"] = failed;
    f.evidence["storedOrAlreadyStored"] = stored;
    AddFailureEvidence(f, false);
    f.explanation = Say(rule.Text("explanation"), {DefinitionOf(main).meaning});
    switch (main)
    {
      case FailureReason::DiskFull:
        f.fix.action = rule.Text("actionDiskFull");
        break;
      case FailureReason::Quota:
        f.fix.action = rule.Text("actionQuota");
        f.fix.configuration.emplace_back("MaximumStorageSize", rule.Text("quotaValue"));
        break;
      case FailureReason::StorageWrite:
        f.fix.action = rule.Text("actionStorageWrite");
        break;
      case FailureReason::Index:
        f.fix.action = rule.Text("actionIndex");
        break;
      default:
        f.fix.action = rule.Text("actionAfterFilters");
        break;
    }
    if (maybeRefused)
    {
      f.fix.configuration.emplace_back("IngestPerf.TimedStorage", true);
      f.fix.action = rule.Text("actionRefused");
    }
    f.fix.effect = Say(rule.Text("effect"), {double(failed), Scope()});
    const bool afterFilters = main == FailureReason::AfterFilters;
    f.confidence = afterFilters ? "medium" : "high";
    f.confidenceReason = rule.Text(afterFilters ? "confidenceMedium" : "confidenceHigh");
  }


  // What Orthanc could not read or identify (a damaged or cut file, a missing UID), or what a Lua script
  // or the filter of a plugin loaded before this one refused: the sender's side, or the site's rule, not
  // Orthanc losing what it was given. Ranked with the instances lost only from a share worth a sender's
  // attention; below, listed last.
  void RuleEvaluation::UnreadableInstances()
  {
    static const RuleEntry& rule = RuleEntryOf("unreadable-instances");
    const TransportFigures& all = input_.all;
    const uint64_t unreadable = FailuresOf(all, true);
    const uint64_t received = Received(all);
    const double share = received > 0 ? double(unreadable) / double(received) : 0;
    if (unreadable == 0)
    {
      Check(rule, false, Format(rule.Text("notFired"), double(received)));
      return;
    }
    Check(rule, true, Format(rule.Text("fired"), double(unreadable), double(received), share * 100));
    const double rankedFrom = rule.Threshold("rankedWithLostFromShare");
    Finding& f = Add(rule, FailingTransport(true, unreadable), 0, CostKind::Measured, -1);
    f.shareOfCycle = -1;
    f.instancesLost = share >= rankedFrom ? unreadable : 0;
    bool filtersBefore = PythonRegisters("IncomingDicomInstanceFilter") ||
                         PythonRegisters("ReceivedInstanceCallback") || !input_.pluginsBefore.empty();
    for (const std::string& callback : input_.configuration.luaCallbacks)
    {
      filtersBefore = filtersBefore || callback.find("Filter") != std::string::npos;
    }
    f.verdict = Say(rule.Text(filtersBefore ? "verdictFilters" : "verdict"),
                    {double(unreadable), double(received), Scope(), share * 100}) +
                (share >= rankedFrom ? "" : rule.Text("rare")) + MostFrom(true);
    f.evidence["failedBeforeFilters"] = unreadable;
    f.evidence["received"] = received;
    f.evidence["rankedWithLostInstancesFromShare"] = rankedFrom;
    AddFailureEvidence(f, true);
    f.explanation = Say(rule.Text("explanation"), {DefinitionOf(FailureReason::BeforeFilters).meaning});
    f.fix.action = rule.Text("action");
    f.fix.effect = rule.Text("effect");
    f.confidence = filtersBefore ? "medium" : "high";
    f.confidenceReason = rule.Text(filtersBefore ? "confidenceMedium" : "confidenceHigh");
  }
}
