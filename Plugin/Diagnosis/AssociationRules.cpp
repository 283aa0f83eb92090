// The predicates of the C-STORE gap rules: what passes between two instances of an association
// (docs/diagnosis.md#cstore-answer-stall and the rules after it). They exclude each other: workers
// first (it makes every gap long), then the stall's signature, then any long gap.
#include "Diagnosis/FindingFigures.h"
#include "Diagnosis/RuleEvaluation.h"

#include <algorithm>
#include <cmath>

namespace IngestPerf
{
  using namespace FindingFigures;

  // The C-STORE gaps at one delayed-ACK timer or two (the timer the gaps show), of all gaps.
  double RuleEvaluation::ShareAtDelayedAckTimers() const
  {
    const uint64_t gaps = dicom_[Phase::AssociationGap].count;
    return gaps == 0 ? 0.0
                     : static_cast<double>(dicom_.gapsNearDelayedAck + dicom_.gapsNearTwoDelayedAcks) /
                         static_cast<double>(gaps);
  }


  bool RuleEvaluation::EnoughGaps(const RuleEntry& rule)
  {
    const PhaseFigures& gap = dicom_[Phase::AssociationGap];
    if (gap.count < kMinimumSamples)
    {
      Check(rule, false, Format(rule.Text("notEnoughGaps"), double(gap.count), double(kMinimumSamples)));
      return false;
    }
    return true;
  }


  // More simultaneous associations than DICOM workers: Orthanc gives an association a worker for each
  // command, and a worker waits up to a second for that association's next command.
  bool RuleEvaluation::DicomWorkersSaturated()
  {
    static const RuleEntry& rule = RuleEntryOf("dicom-workers-saturated");
    if (!EnoughGaps(rule))
    {
      return false;
    }
    const PhaseFigures& gap = dicom_[Phase::AssociationGap];
    const PhaseFigures& server = dicom_[Phase::ServerTotal];
    const double threads = input_.configuration.dicomThreadsCount;
    // Little's law: an association of a steady sender is always either between two instances or in
    // Orthanc's store, so the time of both over the active span is the associations open on average.
    const double occupancy = input_.activeSeconds > 0 ? (gap.sumMs + server.sumMs) / 1000 / input_.activeSeconds : 0;
    const double now = static_cast<double>(std::max<int64_t>(0, input_.dicomConnectionsNow));
    const double peak = input_.connections.dicomMax;  // sampled once a second over the span
    const double associations = std::max(std::max(occupancy, now), peak);
    const bool longGaps = gap.p50Ms >= std::max(rule.Threshold("minimumGapP50Ms"),
                                                rule.Threshold("gapP50OverServerTotalP50") * server.p50Ms);
    if (associations <= threads || !longGaps)
    {
      Check(rule, false,
            Format(rule.Text("notFired"), occupancy, peak, now, threads) + Format(rule.Text("notFiredGap"), gap.p50Ms));
      return false;
    }
    Check(rule, true, Format(rule.Text("fired"), occupancy, peak, now, threads));
    Finding& f = Add(rule, "dicom", gap.meanMs, CostKind::Measured, CycleMs(dicom_));
    const double wanted = std::ceil(associations);
    f.verdict = Format(rule.Text("verdict"), wanted, threads);
    f.evidence["associationsOnAverage"] = Round(occupancy, 0.01);
    f.evidence["associationsOpenNow"] = input_.dicomConnectionsNow;
    f.evidence["associationsOpenAtMost"] = input_.connections.dicomMax;
    f.evidence["connectionSamples"] = input_.connections.samples;
    f.evidence["samplesWithMoreAssociationsThanWorkers"] = input_.connections.dicomOverThreads;
    f.evidence["DicomThreadsCount"] = input_.configuration.dicomThreadsCount;
    f.evidence["associationGap"] = PhaseEvidence(gap);
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.explanation = Format(rule.Text("explanation"), threads, occupancy, input_.activeSeconds, gap.p50Ms);
    const double stalled = ShareAtDelayedAckTimers();
    if (!input_.dicomTcpNoDelay && stalled >= RuleEntryOf("cstore-answer-stall").Threshold("shareOfGapsAtTimers"))
    {
      f.explanation += Format(rule.Text("explanationStallNext"), stalled * 100);
    }
    f.fix.configuration.emplace_back("DicomThreadsCount", static_cast<unsigned int>(std::max(wanted, threads + 1)));
    f.fix.action = rule.Text("action");
    f.fix.effect = rule.MeasuredEffect(rule.Text("effect"));
    const bool seen = now > threads || input_.connections.dicomOverThreads > 0;
    f.confidence = seen ? "high" : "medium";
    f.confidenceReason = rule.Text(seen ? "confidenceHigh" : "confidenceMedium");
    return true;
  }


  // Orthanc writes the C-STORE answer's 12-byte PDV header and the rest in two writes without
  // TCP_NODELAY: Nagle holds the second until the client's delayed ACK. A sender without TCP_NODELAY
  // sending small datasets stalls the same way: two timers per instance.
  bool RuleEvaluation::CStoreAnswerStall()
  {
    static const RuleEntry& rule = RuleEntryOf("cstore-answer-stall");
    if (!EnoughGaps(rule))
    {
      return false;
    }
    const PhaseFigures& gap = dicom_[Phase::AssociationGap];
    const PhaseFigures& server = dicom_[Phase::ServerTotal];
    const double one = static_cast<double>(dicom_.gapsNearDelayedAck) / static_cast<double>(gap.count);
    const double two = static_cast<double>(dicom_.gapsNearTwoDelayedAcks) / static_cast<double>(gap.count);
    const double band = one + two;
    const double timerMs = dicom_.delayedAck->ms;
    if (input_.dicomTcpNoDelay)
    {
      Check(rule, false, rule.Text("notJudgedNoDelay"));
      return false;
    }
    // The stall's signature is the gaps at the timer, whatever Orthanc's own store takes (a slow
    // callback of the site's lengthens serverTotal; the stall is a cost of its own beside it).
    const double needed = rule.Threshold("shareOfGapsAtTimers");
    if (band < needed)
    {
      Check(rule, false,
            Say(rule.Text("notFired"), {band * 100, BandText(dicom_.delayedAck->one), BandText(dicom_.delayedAck->two),
                                        needed * 100, gap.p50Ms, server.p50Ms}));
      return false;
    }
    Check(rule, true,
          Say(rule.Text("fired"), {one * 100, BandText(dicom_.delayedAck->one), two * 100,
                                   BandText(dicom_.delayedAck->two), server.p50Ms}));
    const bool senderToo = two > one;
    const double cycle = CycleMs(dicom_);
    Finding& f = Add(rule, "dicom", gap.meanMs, CostKind::Measured, cycle);
    f.verdict = Format(rule.Text("verdict"), f.shareOfCycle * 100, gap.meanMs, cycle) +
                (senderToo ? rule.Text("verdictSenderToo") : "");
    f.evidence["gapsAtOneDelayedAck"] = Round(one, 0.001);
    f.evidence["gapsAtTwoDelayedAcks"] = Round(two, 0.001);
    f.evidence["delayedAckTimerMs"] = timerMs;
    f.evidence["associationGap"] = PhaseEvidence(gap);
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.evidence["cycleMs"] = Round(cycle);
    f.evidence["dicomTcpNoDelayInEffect"] = false;
    f.explanation = Say(rule.Text("explanation"), {MeanAndTail(server), MeanAndTail(gap), band * 100, timerMs});
    if (senderToo)
    {
      f.explanation += rule.Text("explanationSenderToo");
    }
    // No configuration key: DCMTK reads only its environment, which is the operator's to set, not a
    // plugin's. With the variable already on, this rule does not fire (sender-stall judges the gaps).
    f.fix.action = rule.Text("action");
    f.fix.effect = rule.MeasuredEffect(Format(rule.Text("effect"), timerMs));
    const bool high = band >= rule.Threshold("highConfidenceShareOfGaps");
    f.confidence = high ? "high" : "medium";
    f.confidenceReason = Format(rule.Text("confidence"), band * 100, timerMs);
    return true;
  }


  // Once Orthanc answers with TCP_NODELAY, a sender that keeps Nagle's algorithm still stalls on its
  // side for some instances and not others (bimodal gaps: 1-5 ms, or 40-65 ms). The mean hides it under
  // a short median, so the rule reads the gaps at the timer: their number, and the time they take.
  bool RuleEvaluation::SenderStall(bool explained)
  {
    static const RuleEntry& rule = RuleEntryOf("sender-stall");
    if (!EnoughGaps(rule))
    {
      return false;
    }
    if (explained)
    {
      Check(rule, false, rule.Text("explainedAbove"));
      return false;
    }
    if (!input_.dicomTcpNoDelay)
    {
      Check(rule, false, rule.Text("notJudgedNagle"));
      return false;
    }
    const PhaseFigures& gap = dicom_[Phase::AssociationGap];
    const PhaseFigures& server = dicom_[Phase::ServerTotal];
    const double timerMs = dicom_.delayedAck->ms;
    const uint64_t atTimer = dicom_.gapsNearDelayedAck + dicom_.gapsNearTwoDelayedAcks;
    const double shareOfGaps = static_cast<double>(atTimer) / static_cast<double>(gap.count);
    const double shareOfGapTime = gap.sumMs > 0 ? std::min(1.0, dicom_.gapMsNearDelayedAcks / gap.sumMs) : 0;
    const double perGapMs = dicom_.gapMsNearDelayedAcks / static_cast<double>(gap.count);
    const double cycle = CycleMs(dicom_);
    const double shareOfCycle = cycle > 0 ? perGapMs / cycle : 0;
    const std::string seen = Say(rule.Text("seen"), {double(atTimer), double(gap.count),
                                                     BandText(dicom_.delayedAck->one), BandText(dicom_.delayedAck->two),
                                                     shareOfGapTime * 100, shareOfCycle * 100, perGapMs, cycle});
    if (double(atTimer) < rule.Threshold("minimumGaps") || shareOfGaps < rule.Threshold("shareOfGaps") ||
        shareOfGapTime < rule.Threshold("shareOfGapTime") || shareOfCycle < rule.Threshold("shareOfCycle"))
    {
      Check(rule, false,
            seen + Format(rule.Text("notFired"), rule.Threshold("minimumGaps"), rule.Threshold("shareOfGaps") * 100,
                          rule.Threshold("shareOfGapTime") * 100, rule.Threshold("shareOfCycle") * 100));
      return false;
    }
    Check(rule, true, seen);
    Finding& f = Add(rule, "dicom", perGapMs, CostKind::Measured, cycle);
    // The senders with the most time at the timer since the reset, and what their names tell.
    const CStoreSender* first = nullptr;
    Evidence& senders = f.evidence["sendersSinceReset"];
    senders = Evidence::List();
    for (size_t i = 0; i < input_.cstoreSenders.size() && senders.Size() < 5; i++)
    {
      const CStoreSender& sender = input_.cstoreSenders[i];
      if (sender.gapsNearDelayedAcks == 0)
      {
        continue;
      }
      first = first == nullptr ? &sender : first;
      Evidence row;
      row["remoteAet"] = sender.remoteAet;
      row["software"] = SenderSoftwareName(sender.software);
      row["gaps"] = sender.gaps;
      row["gapsAtDelayedAckTimer"] = sender.gapsNearDelayedAcks;
      row["msAtDelayedAckTimer"] = Round(sender.gapMsNearDelayedAcks, 0.1);
      row["delayedAckTimerMs"] = timerMs;
      senders.Append(std::move(row));
    }
    const SenderSoftware software = first != nullptr ? first->software : SenderSoftware::Unknown;
    std::string who = rule.Text("theSender");
    if (first != nullptr)
    {
      who = software != SenderSoftware::Unknown
              ? Say(rule.Text("theSenderKnown"), {first->remoteAet, SenderSoftwareName(software)})
              : Say(rule.Text("theSenderNamed"), {first->remoteAet});
    }
    f.verdict = Format(rule.Text("verdict"), f.shareOfCycle * 100, perGapMs, cycle);
    f.evidence["gapsAtDelayedAckTimer"] = atTimer;
    f.evidence["gapsAtOneDelayedAck"] = dicom_.gapsNearDelayedAck;
    f.evidence["gapsAtTwoDelayedAcks"] = dicom_.gapsNearTwoDelayedAcks;
    f.evidence["shareOfGapTimeAtDelayedAckTimer"] = Round(shareOfGapTime, 0.001);
    f.evidence["associationGap"] = PhaseEvidence(gap);
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.evidence["cycleMs"] = Round(cycle);
    f.evidence["dicomTcpNoDelayInEffect"] = true;
    f.evidence["delayedAckTimerMs"] = timerMs;
    f.explanation = Say(rule.Text("explanation"),
                        {double(atTimer), double(gap.count), timerMs, shareOfGapTime * 100, MeanAndTail(gap), timerMs});
    f.fix.action = Say(rule.Text("action"), {who, SenderNoDelayAdvice(software)});
    if (software != SenderSoftware::Unknown)
    {
      f.fix.action += Say(rule.Text("actionOtherSender"), {SenderNoDelayAdvice(SenderSoftware::Unknown)});
    }
    f.fix.effect = rule.MeasuredEffect(rule.Text("effect"));
    const bool clear =
      shareOfGaps >= rule.Threshold("clearShareOfGaps") && shareOfGapTime >= rule.Threshold("clearShareOfGapTime");
    f.confidence = clear ? "high" : "medium";
    f.confidenceReason = clear ? rule.Text("confidenceHigh") : Format(rule.Text("confidenceMedium"), timerMs);
    return true;
  }


  // The site's ReceivedInstanceCallback, which Orthanc lets one plugin hold: where the site's
  // orthanc-python script registers it, this plugin leaves it, and it runs before the instance
  // filters, inside HTTP receive and the C-STORE associationGap, with no hook of this plugin around it.
  bool RuleEvaluation::SiteHoldsReceivedInstanceCallback() const
  {
    return !input_.receivedInstanceHeld && PythonRegisters("ReceivedInstanceCallback");
  }


  bool RuleEvaluation::SiteReceivedInstanceCallback()
  {
    static const RuleEntry& rule = RuleEntryOf("received-instance-callback");
    if (!SiteHoldsReceivedInstanceCallback())
    {
      Check(rule, false, rule.Text(input_.receivedInstanceHeld ? "notJudgedHeld" : "notJudgedNotRegistered"));
      return false;
    }
    const PhaseFigures& receive = rest_[Phase::Receive];
    const PhaseFigures& gap = dicom_[Phase::AssociationGap];
    const bool http = receive.count >= kMinimumSamples && receive.meanMs >= rule.Threshold("receiveMs") &&
                      receive.meanMs >= rule.Threshold("receiveShareOfServerTotal") * rest_[Phase::ServerTotal].meanMs;
    // With TCP_NODELAY on Orthanc's side, a gap at the delayed-ACK timer is the sender's stall instead.
    const bool dicom = gap.count >= kMinimumSamples && input_.dicomTcpNoDelay &&
                       gap.p50Ms >= rule.Threshold("gapP50Ms") &&
                       ShareAtDelayedAckTimers() < RuleEntryOf("cstore-answer-stall").Threshold("shareOfGapsAtTimers");
    const std::string seen = Format(rule.Text("seen"), receive.meanMs, gap.p50Ms);
    if (!http && !dicom)
    {
      Check(rule, false, seen);
      return false;
    }
    Check(rule, true, seen);
    const double cost = std::max(http ? receive.meanMs : 0.0, dicom ? gap.p50Ms : 0.0);
    const char* transport = http && dicom ? "all" : http ? "rest" : "dicom";
    const double cycle = http && dicom ? AllCycleMs() : http ? CycleMs(rest_) : CycleMs(dicom_);
    Finding& f = Add(rule, transport, cost, CostKind::Measured, cycle);
    std::string where;
    if (http)
    {
      where += Format(rule.Text("whereHttp"), receive.meanMs);
    }
    if (dicom)
    {
      where += (where.empty() ? "" : ", ") + Format(rule.Text("whereDicom"), gap.p50Ms);
    }
    f.verdict = Say(rule.Text("verdict"), {where});
    f.evidence["receive"] = receive.count > 0 ? PhaseEvidence(receive) : Evidence();
    f.evidence["associationGap"] = gap.count > 0 ? PhaseEvidence(gap) : Evidence();
    if (PartsKnown(receive))
    {
      f.evidence["receiveParts"] = PartsEvidence(receive);
    }
    f.evidence["pythonCallbacks"] = NameList(input_.configuration.pythonCallbacks);
    Describe(f, rule, "medium", "confidence");
    return true;
  }


  void RuleEvaluation::SlowSender(bool explained)
  {
    static const RuleEntry& rule = RuleEntryOf("slow-sender");
    if (!EnoughGaps(rule))
    {
      return;
    }
    const PhaseFigures& gap = dicom_[Phase::AssociationGap];
    const PhaseFigures& server = dicom_[Phase::ServerTotal];
    if (explained)
    {
      Check(rule, false, rule.Text("explainedAbove"));
      return;
    }
    const double meanMs = rule.Threshold("gapMeanMs");
    if (gap.meanMs < meanMs || gap.p50Ms < rule.Threshold("gapP50OverServerTotalP50") * server.p50Ms)
    {
      Check(rule, false, Format(rule.Text("notFired"), gap.meanMs, meanMs, gap.p50Ms, server.p50Ms));
      return;
    }
    const double atTimer = ShareAtDelayedAckTimers();
    Check(rule, true, Format(rule.Text("fired"), gap.meanMs, server.p50Ms, atTimer * 100));
    const double cycle = CycleMs(dicom_);
    Finding& f = Add(rule, "dicom", gap.meanMs, CostKind::Measured, cycle);
    f.evidence["associationGap"] = PhaseEvidence(gap);
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.evidence["cycleMs"] = Round(cycle);
    f.evidence["gapsAtDelayedAckTimers"] = Round(atTimer, 0.001);
    f.evidence["dicomTcpNoDelayInEffect"] = input_.dicomTcpNoDelay;
    f.evidence["megabytesPerInstance"] =
      Round(dicom_.stored > 0 ? static_cast<double>(dicom_.storedBytes) / 1e6 / double(dicom_.stored) : 0, 0.001);
    f.verdict = Format(rule.Text("verdict"), f.shareOfCycle * 100, gap.meanMs, cycle);
    f.explanation = Say(rule.Text("explanation"), {MeanAndTail(gap), MeanAndTail(server)});
    const std::string advice = SenderNoDelayAdvice(SenderSoftware::Unknown);
    if (input_.dicomTcpNoDelay)
    {
      f.fix.action = Say(rule.Text("action"), {advice});
      f.fix.effect = rule.Text("effect");
      f.confidence = "high";
      f.confidenceReason = rule.Text("confidenceHigh");
    }
    else
    {
      // A part of each gap may still be Orthanc's answer waiting for the sender's delayed ACK.
      f.fix.action = Say(rule.Text("actionNagle"), {advice});
      f.fix.effect = rule.Text("effectNagle");
      f.confidence = "medium";
      f.confidenceReason = rule.Text("confidenceMedium");
    }
  }
}
