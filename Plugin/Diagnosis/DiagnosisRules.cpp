#include "Diagnosis/DiagnosisRules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    // The thresholds of docs/diagnosis.md. A healthy ingest on the 2-core development machine:
    // serverTotal 4-6 ms per 0.5 MB instance (persist 4-5 of it, with SyncStorageArea), preStore
    // 0.3 ms, receive 0.2 ms over loopback; a C-STORE association's gap 1-5 ms once TCP_NODELAY is
    // in effect on both sides, 42-48 ms when it is not.
    constexpr double kStallShareOfGaps = 0.5;  // of the gaps at one or two delayed-ACK timers
    // The sender's own stall, once Orthanc answers with TCP_NODELAY: only some of its gaps wait for the
    // timer (bimodal: 1-5 ms or 40-65 ms), so their number, the share of the gaps' time they take and
    // the share of the cycle they cost must all be there; one such gap in 60 is not a stall.
    constexpr uint64_t kSenderStallMinimumGaps = 3;
    constexpr double kSenderStallShareOfGaps = 0.03;  // storescu: 4 to 19 gaps of 59 from one run to the next
    constexpr double kSenderStallClearShareOfGaps = 0.10;
    constexpr double kSenderStallShareOfGapTime = 0.25;
    constexpr double kSenderStallShareOfCycle = 0.10;
    constexpr double kSlowGapMs = 20;     // a gap worth naming
    constexpr double kBusyGapFactor = 2;  // gap p50 against serverTotal p50
    constexpr double kTranscodeMs = 2;
    constexpr double kPreStoreMs = 5;
    constexpr double kStorageMs = 5;
    constexpr double kIndexMs = 5;
    constexpr double kPersistUntimedMs = 20;
    constexpr double kCallbacksMs = 5;       // the other plugins' callbacks, per instance
    constexpr double kShareOfServer = 0.25;  // of serverTotal, for the server-side rules
    constexpr double kDominantShare = 0.4;
    constexpr double kUploadMs = 20;
    constexpr double kHttpBusyShare = 0.9;  // of HttpThreadsCount, when no queue is visible now
    constexpr uint64_t kBacklog = 10;
    constexpr double kChangePerInstanceMs = 10;
    constexpr double kChangeLagMs = 100;
    constexpr double kRejectedShare = 0.05;
    // From this share of the instances received, unreadable ones rank with the instances lost.
    constexpr double kUnreadableShare = 0.01;
    constexpr uint64_t kRejectedMinimum = 5;
    // The parts of a phase (on a CPU, waiting for one, blocked) are read from this many split instances.
    constexpr uint64_t kMinimumSplit = 5;
    constexpr double kWaitingShare = 0.25;  // of Orthanc's store, waiting for a CPU
    constexpr double kWaitingMs = 1;
    constexpr double kRequestGapMs = 5;       // between an answer and the next request of its connection
    constexpr double kRequestGapShare = 0.3;  // of the HTTP cycle
    constexpr double kAnswerCpuShare = 0.5;   // of the request gap on Orthanc's CPU: Orthanc's answer, not the client

    std::string Format(const char* format, double a, double b = 0, double c = 0, double d = 0)
    {
      char text[512];
      std::snprintf(text, sizeof(text), format, a, b, c, d);
      return text;
    }

    double Round(double value, double step = 0.001)
    {
      return std::round(value / step) * step;
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

    // The cycle, the one base of every finding's shareOfCycle: the mean time of one instance through
    // a transport, serverTotal plus the gap before it (C-STORE: associationGap; HTTP keep-alive:
    // requestGap), the means of "Where the time goes" on the page, whose bars add up to it.
    double CycleMs(const TransportFigures& transport)
    {
      return transport[Phase::ServerTotal].meanMs + transport[Phase::AssociationGap].meanMs +
             transport[Phase::RequestGap].meanMs;
    }

    bool PartsKnown(const PhaseFigures& phase)
    {
      return phase.parts.sampled >= kMinimumSplit;
    }

    // The parts of a phase as evidence: the means over the split instances, in ms.
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

    // "71% blocked, 24% on a CPU, 5% waiting for a CPU (over 25 instances)", largest first.
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

    enum class Dominant
    {
      OnCpu,
      Waiting,
      Blocked
    };

    Dominant DominantPart(const PartFigures& parts)
    {
      if (parts.waitingForCpuMs >= parts.onCpuMs && parts.waitingForCpuMs >= parts.blockedMs)
      {
        return Dominant::Waiting;
      }
      return parts.onCpuMs >= parts.blockedMs ? Dominant::OnCpu : Dominant::Blocked;
    }

    // "mean 16.2 ms (p50 1.1, p90 45.0, p99 52.6)": a figure quoted with its tail, so that a mean
    // pulled up by a few long values and a short median are read together.
    std::string MeanAndTail(const PhaseFigures& phase)
    {
      return Format("mean %.1f ms (p50 %.1f, p90 %.1f, p99 %.1f)", phase.meanMs, phase.p50Ms, phase.p90Ms, phase.p99Ms);
    }

    std::string BandText(const GapBand& band)
    {
      return Format("%.0f-%.0f ms", band.fromMs, band.toMs);
    }

    double Share(double part, double whole)
    {
      return whole > 0 ? Round(std::min(1.0, part / whole), 0.001) : -1;
    }

    class Rules
    {
    public:
      explicit Rules(const DiagnosisInput& input) :
        input_(input),
        dicom_(input.transports[static_cast<size_t>(Transport::Dicom)]),
        rest_(input.transports[static_cast<size_t>(Transport::Rest)])
      {
      }

      Diagnosis Run()
      {
        // The C-STORE rules exclude each other: workers first (it makes every gap long), then the
        // stall's signature, then any long gap.
        const bool saturated = DicomWorkersSaturated();
        bool stalled = false;
        if (saturated)
        {
          Check("cstore-answer-stall", false, "the gaps are explained by dicom-workers-saturated");
        }
        else
        {
          stalled = CStoreAnswerStall();
        }
        // The site's ReceivedInstanceCallback, held by it, ends the gaps at the instance filter, after
        // that callback: its time is in every gap, which then says nothing of the sender's timer.
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

        // Instances lost first, most lost first; then the cost per instance; unobservable costs, then
        // what costs Orthanc nothing (a rare unreadable instance, the client's) last.
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

    private:
      const DiagnosisInput& input_;
      const TransportFigures& dicom_;
      const TransportFigures& rest_;
      Diagnosis result_;

      // The cycle of the transports merged, for the findings on "all": each transport's cycle
      // weighted by its instances (for C-STORE alone, its own cycle).
      double AllCycleMs() const
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

      void Check(const char* id, bool fired, const std::string& reason)
      {
        result_.checks.push_back(RuleCheck{id, fired, reason});
      }

      Finding& Add(const char* id, const char* transport, double costMs, CostKind kind, double cycleMs)
      {
        Finding finding;
        finding.id = id;
        finding.transport = transport;
        finding.costKind = kind;
        finding.costMsPerInstance = kind == CostKind::Unobservable ? 0 : Round(costMs);
        finding.shareOfCycle = kind == CostKind::Unobservable ? -1 : Share(costMs, cycleMs);
        result_.findings.push_back(finding);
        return result_.findings.back();
      }

      // The C-STORE gaps at one delayed-ACK timer or two (the timer the gaps show), of all gaps.
      double ShareAtDelayedAckTimers() const
      {
        const uint64_t gaps = dicom_[Phase::AssociationGap].count;
        return gaps == 0 ? 0.0
                         : static_cast<double>(dicom_.gapsNearDelayedAck + dicom_.gapsNearTwoDelayedAcks) /
                             static_cast<double>(gaps);
      }

      bool EnoughGaps(const char* id)
      {
        const PhaseFigures& gap = dicom_[Phase::AssociationGap];
        if (gap.count < kMinimumSamples)
        {
          Check(
            id, false,
            Format("not judged: %.0f C-STORE gaps (at least %.0f needed)", double(gap.count), double(kMinimumSamples)));
          return false;
        }
        return true;
      }

      // More simultaneous associations than DICOM workers: Orthanc gives an association a worker
      // for each command, and a worker waits up to a second for that association's next command,
      // so the others wait for a worker between their instances.
      bool DicomWorkersSaturated()
      {
        const char* id = "dicom-workers-saturated";
        if (!EnoughGaps(id))
        {
          return false;
        }
        const PhaseFigures& gap = dicom_[Phase::AssociationGap];
        const PhaseFigures& server = dicom_[Phase::ServerTotal];
        const double threads = input_.configuration.dicomThreadsCount;
        // Little's law: an association of a steady sender is always either between two instances
        // or in Orthanc's store, so the time of both over the active span is the number of
        // associations that were open on average.
        const double occupancy =
          input_.activeSeconds > 0 ? (gap.sumMs + server.sumMs) / 1000 / input_.activeSeconds : 0;
        const double now = static_cast<double>(std::max<int64_t>(0, input_.dicomConnectionsNow));
        const double peak = input_.connections.dicomMax;  // sampled once a second over the span
        const double associations = std::max(std::max(occupancy, now), peak);
        const bool longGaps = gap.p50Ms >= std::max(10.0, kBusyGapFactor * server.p50Ms);
        if (associations <= threads || !longGaps)
        {
          Check(id, false,
                Format("%.1f associations on average (%.0f open at most, %.0f now) for DicomThreadsCount %.0f",
                       occupancy, peak, now, threads) +
                  Format("; gap p50 %.1f ms", gap.p50Ms));
          return false;
        }
        Check(id, true,
              Format("%.1f associations on average (%.0f open at most, %.0f now) for %.0f DICOM workers", occupancy,
                     peak, now, threads));
        Finding& f = Add(id, "dicom", gap.meanMs, CostKind::Measured, CycleMs(dicom_));
        const double wanted = std::ceil(associations);
        f.verdict = Format("More simultaneous C-STORE associations (%.0f) than DICOM worker threads "
                           "(DicomThreadsCount %.0f): each association waits for a worker between its instances",
                           wanted, threads);
        f.evidence["associationsOnAverage"] = Round(occupancy, 0.01);
        f.evidence["associationsOpenNow"] = input_.dicomConnectionsNow;
        f.evidence["associationsOpenAtMost"] = input_.connections.dicomMax;
        f.evidence["connectionSamples"] = input_.connections.samples;
        f.evidence["samplesWithMoreAssociationsThanWorkers"] = input_.connections.dicomOverThreads;
        f.evidence["DicomThreadsCount"] = input_.configuration.dicomThreadsCount;
        f.evidence["associationGap"] = PhaseEvidence(gap);
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.explanation = Format("Orthanc runs a command of an association on one of its %.0f DICOM workers, which then "
                               "waits up to a second for that association's next command. With %.1f associations "
                               "on average (the gaps and stores of all associations over the %.1f s of ingest), "
                               "instances wait for a free worker: the gap p50 is %.1f ms.",
                               threads, occupancy, input_.activeSeconds, gap.p50Ms);
        const double stalled = ShareAtDelayedAckTimers();
        if (!input_.dicomTcpNoDelay && stalled >= kStallShareOfGaps)
        {
          f.explanation += Format(" %.0f%% of the gaps also sit at the delayed-ACK timer and TCP_NODELAY is not in "
                                  "effect: with enough workers, expect cstore-answer-stall next.",
                                  stalled * 100);
        }
        f.fix.configuration.emplace_back("DicomThreadsCount", static_cast<unsigned int>(std::max(wanted, threads + 1)));
        f.fix.action = "Raise DicomThreadsCount to at least the number of simultaneous associations (Orthanc restart)";
        f.fix.effect = "Associations stop waiting for a worker between their instances: the gap falls to what the "
                       "sender and the network take, and the instances per second rise (measured with 8 "
                       "associations: the gap's median about 5 times shorter with a worker each than with one "
                       "for all, 1.6 times the throughput; "
                       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after)";
        const bool seen = now > threads || input_.connections.dicomOverThreads > 0;
        f.confidence = seen ? "high" : "medium";
        f.confidenceReason = seen ? "the open TCP associations outnumbered the workers (right now, or in the samples "
                                    "taken once a second)"
                                  : "inferred from the gaps and stores over the window (Little's law); no more "
                                    "associations than workers were seen open";
        return true;
      }

      // Orthanc writes the C-STORE answer's 12-byte PDV header and the rest in two writes without
      // TCP_NODELAY: Nagle holds the second until the client's delayed ACK, about 40 ms. A sender
      // without TCP_NODELAY sending small datasets stalls the same way: two timers per instance.
      bool CStoreAnswerStall()
      {
        const char* id = "cstore-answer-stall";
        if (!EnoughGaps(id))
        {
          return false;
        }
        const PhaseFigures& gap = dicom_[Phase::AssociationGap];
        const PhaseFigures& server = dicom_[Phase::ServerTotal];
        const double one = static_cast<double>(dicom_.gapsNearDelayedAck) / static_cast<double>(gap.count);
        const double two = static_cast<double>(dicom_.gapsNearTwoDelayedAcks) / static_cast<double>(gap.count);
        const double band = one + two;
        if (input_.dicomTcpNoDelay)
        {
          Check(id, false, "TCP_NODELAY is in effect on Orthanc's DICOM associations: its answers do not stall");
          return false;
        }
        // The stall's signature is the gaps at the timer, whatever Orthanc's own store takes (a slow
        // callback of the site's lengthens serverTotal; the stall is a cost of its own beside it).
        if (band < kStallShareOfGaps)
        {
          Check(id, false,
                Format("%.0f%% of the gaps at one or two delayed-ACK timers (", band * 100) +
                  BandText(dicom_.delayedAck->one) + " or " + BandText(dicom_.delayedAck->two) +
                  Format(", %.0f%% needed); gap p50 %.1f ms, serverTotal p50 %.1f ms", kStallShareOfGaps * 100,
                         gap.p50Ms, server.p50Ms));
          return false;
        }
        Check(id, true,
              Format("%.0f%% of the gaps at one delayed-ACK timer (", one * 100) + BandText(dicom_.delayedAck->one) +
                Format("), %.0f%% at two (", two * 100) + BandText(dicom_.delayedAck->two) +
                Format("); serverTotal p50 %.1f ms", server.p50Ms));
        const bool senderToo = two > one;
        const double cycle = CycleMs(dicom_);
        Finding& f = Add(id, "dicom", gap.meanMs, CostKind::Measured, cycle);
        f.verdict = Format("C-STORE answer stall: %.0f%% of each C-STORE cycle (%.0f of %.0f ms per instance, "
                           "means) passes between instances, the delayed-ACK timer holding Orthanc's C-STORE answer "
                           "(Nagle)",
                           f.shareOfCycle * 100, gap.meanMs, cycle) +
                    (senderToo ? " and the sender's dataset" : "");
        f.evidence["gapsAtOneDelayedAck"] = Round(one, 0.001);
        f.evidence["gapsAtTwoDelayedAcks"] = Round(two, 0.001);
        f.evidence["delayedAckTimerMs"] = dicom_.delayedAck->ms;
        f.evidence["associationGap"] = PhaseEvidence(gap);
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["cycleMs"] = Round(cycle);
        f.evidence["dicomTcpNoDelayInEffect"] = false;
        f.explanation = "Orthanc stores an instance in " + MeanAndTail(server) + " but the gap to the next one is " +
                        MeanAndTail(gap) +
                        Format(", %.0f%% of the gaps at the %.0f ms delayed-ACK timer (or two of "
                               "them). Orthanc (DCMTK) sends the 12-byte header of its C-STORE "
                               "answer and the rest in two writes; without TCP_NODELAY, Nagle's "
                               "algorithm holds the rest until the client acknowledges the header, "
                               "which it delays (40 ms on Linux, 200 ms on Windows). The sender is not "
                               "idle: it waits for the answer.",
                               band * 100, dicom_.delayedAck->ms);
        if (senderToo)
        {
          f.explanation += " Most gaps hold two timers: the sender's small datasets stall the same way on its side.";
        }
        // No configuration key: DCMTK reads only its environment, which is the operator's to set, not a
        // plugin's. With the variable already on, this rule does not fire (sender-stall judges the gaps).
        f.fix.action = "Start Orthanc with TCP_NODELAY=1 in its environment (systemd: Environment=TCP_NODELAY=1 in "
                       "a drop-in; docker: -e TCP_NODELAY=1; DCMTK reads a non-zero integer only, so 0 or yes keeps "
                       "Nagle's algorithm), restart Orthanc; then the sender's own stall, if any, shows as "
                       "sender-stall (a DCMTK sender gains as much again with TCP_NODELAY=1 in its own environment)";
        f.fix.effect = Format("Removes the delayed-ACK wait, about %.0f ms, from each instance's C-STORE cycle: "
                              "one association is expected to store several times the instances per second, and "
                              "more once the sender answers without Nagle too (measured at 40 ms: about 3 and 12 "
                              "times, docs/measurements/benchmarks.md#dicom-tcp_nodelay-the-remedy-for-the-c-store-"
                              "answer-stall)",
                              dicom_.delayedAck->ms);
        f.confidence = band >= 0.8 ? "high" : "medium";
        f.confidenceReason =
          Format("%.0f%% of the gaps sit at the delayed-ACK timer; a sender pausing about %.0f "
                 "ms on its own would look the same, which TCP_NODELAY on Orthanc's side tells apart",
                 band * 100, dicom_.delayedAck->ms);
        return true;
      }

      // Once Orthanc answers with TCP_NODELAY, a sender that keeps Nagle's algorithm still stalls on
      // its side: the end of a dataset waits for Orthanc's delayed ACK of what came before, for some
      // instances and not others (bimodal gaps: 1-5 ms, or 40-65 ms). The mean hides it under a short
      // median, so the rule reads the gaps at the timer: their number, and the time they take.
      bool SenderStall(bool explained)
      {
        const char* id = "sender-stall";
        if (!EnoughGaps(id))
        {
          return false;
        }
        if (explained)
        {
          Check(id, false, "the gaps are explained by the finding above");
          return false;
        }
        if (!input_.dicomTcpNoDelay)
        {
          Check(id, false,
                "not judged: TCP_NODELAY is not in effect on Orthanc's side, whose answers stall at the same timer");
          return false;
        }
        const PhaseFigures& gap = dicom_[Phase::AssociationGap];
        const PhaseFigures& server = dicom_[Phase::ServerTotal];
        const uint64_t atTimer = dicom_.gapsNearDelayedAck + dicom_.gapsNearTwoDelayedAcks;
        const double shareOfGaps = static_cast<double>(atTimer) / static_cast<double>(gap.count);
        const double shareOfGapTime = gap.sumMs > 0 ? std::min(1.0, dicom_.gapMsNearDelayedAcks / gap.sumMs) : 0;
        const double perGapMs = dicom_.gapMsNearDelayedAcks / static_cast<double>(gap.count);
        const double cycle = CycleMs(dicom_);
        const double shareOfCycle = cycle > 0 ? perGapMs / cycle : 0;
        const std::string seen =
          Format("%.0f gaps of %.0f at the delayed-ACK timer (", double(atTimer), double(gap.count)) +
          BandText(dicom_.delayedAck->one) + " or " + BandText(dicom_.delayedAck->two) +
          Format("), %.0f%% of the gaps' time, %.0f%% of the cycle (%.1f of %.1f ms per instance, means)",
                 shareOfGapTime * 100, shareOfCycle * 100, perGapMs, cycle);
        if (atTimer < kSenderStallMinimumGaps || shareOfGaps < kSenderStallShareOfGaps ||
            shareOfGapTime < kSenderStallShareOfGapTime || shareOfCycle < kSenderStallShareOfCycle)
        {
          Check(id, false,
                seen + Format("; needed: %.0f gaps and %.0f%% of them, %.0f%% of their time, %.0f%% of the cycle",
                              double(kSenderStallMinimumGaps), kSenderStallShareOfGaps * 100,
                              kSenderStallShareOfGapTime * 100, kSenderStallShareOfCycle * 100));
          return false;
        }
        Check(id, true, seen);
        Finding& f = Add(id, "dicom", perGapMs, CostKind::Measured, cycle);
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
          row["delayedAckTimerMs"] = dicom_.delayedAck->ms;
          senders.Append(std::move(row));
        }
        const SenderSoftware software = first != nullptr ? first->software : SenderSoftware::Unknown;
        std::string who = "the sender";
        if (first != nullptr)
        {
          who = "the sender (calling AET " + first->remoteAet +
                (software != SenderSoftware::Unknown ? std::string(", ") + SenderSoftwareName(software) : "") + ")";
        }
        f.verdict = Format("The sender's own Nagle stall: %.0f%% of each C-STORE cycle (%.1f of %.1f ms per "
                           "instance, means) passes in gaps at the delayed-ACK timer, though Orthanc answers with "
                           "TCP_NODELAY",
                           f.shareOfCycle * 100, perGapMs, cycle);
        f.evidence["gapsAtDelayedAckTimer"] = atTimer;
        f.evidence["gapsAtOneDelayedAck"] = dicom_.gapsNearDelayedAck;
        f.evidence["gapsAtTwoDelayedAcks"] = dicom_.gapsNearTwoDelayedAcks;
        f.evidence["shareOfGapTimeAtDelayedAckTimer"] = Round(shareOfGapTime, 0.001);
        f.evidence["associationGap"] = PhaseEvidence(gap);
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["cycleMs"] = Round(cycle);
        f.evidence["dicomTcpNoDelayInEffect"] = true;
        f.evidence["delayedAckTimerMs"] = dicom_.delayedAck->ms;
        f.explanation =
          "TCP_NODELAY is in effect on Orthanc's associations, so its C-STORE answers leave at once; yet " +
          Format("%.0f of the %.0f gaps between instances sit at the %.0f ms delayed-ACK timer and take %.0f%% of "
                 "the gaps' time: the gap is ",
                 double(atTimer), double(gap.count), dicom_.delayedAck->ms, shareOfGapTime * 100) +
          MeanAndTail(gap) +
          Format(", short for most instances and about %.0f ms longer for the others.", dicom_.delayedAck->ms) +
          " The sender holds the end of a "
          "dataset behind Nagle's algorithm until Orthanc acknowledges what it sent before, which Orthanc's "
          "kernel delays. Its median hides it; the time it costs is the mean's.";
        f.fix.action = "Disable Nagle's algorithm on " + who + ": " + SenderNoDelayAdvice(software);
        if (software != SenderSoftware::Unknown)
        {
          f.fix.action += std::string(". Another sender: ") + SenderNoDelayAdvice(SenderSoftware::Unknown);
        }
        f.fix.effect = "Removes the sender's delayed-ACK waits from the gaps between instances: one association "
                       "stores 1.2 to 3.7 times the instances per second (storescu), about 3 times (a second "
                       "Orthanc) (measured: docs/diagnosis.md#sender-stall)";
        const bool clear = shareOfGaps >= kSenderStallClearShareOfGaps && shareOfGapTime >= 0.5;
        f.confidence = clear ? "high" : "medium";
        f.confidenceReason = clear ? "Orthanc's side is fixed and the gaps at the timer are many and take most of "
                                     "the gaps' time"
                                   : Format("Orthanc's side is fixed, but few gaps sit at the timer: a sender "
                                            "pausing about %.0f ms now and then on its own would look the same",
                                            dicom_.delayedAck->ms);
        return true;
      }

      void SlowSender(bool explained)
      {
        const char* id = "slow-sender";
        if (!EnoughGaps(id))
        {
          return;
        }
        const PhaseFigures& gap = dicom_[Phase::AssociationGap];
        const PhaseFigures& server = dicom_[Phase::ServerTotal];
        if (explained)
        {
          Check(id, false, "the gaps are explained by the finding above");
          return;
        }
        if (gap.meanMs < kSlowGapMs || gap.p50Ms < kBusyGapFactor * server.p50Ms)
        {
          Check(id, false,
                Format("gap mean %.1f ms (%.0f ms needed), p50 %.1f ms against serverTotal p50 %.1f ms", gap.meanMs,
                       kSlowGapMs, gap.p50Ms, server.p50Ms));
          return;
        }
        const double atTimer = ShareAtDelayedAckTimers();
        Check(id, true,
              Format("gap mean %.1f ms against serverTotal p50 %.1f ms, %.0f%% of the gaps at the delayed-ACK timer",
                     gap.meanMs, server.p50Ms, atTimer * 100));
        const double cycle = CycleMs(dicom_);
        Finding& f = Add(id, "dicom", gap.meanMs, CostKind::Measured, cycle);
        f.evidence["associationGap"] = PhaseEvidence(gap);
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["cycleMs"] = Round(cycle);
        f.evidence["gapsAtDelayedAckTimers"] = Round(atTimer, 0.001);
        f.evidence["dicomTcpNoDelayInEffect"] = input_.dicomTcpNoDelay;
        f.evidence["megabytesPerInstance"] =
          Round(dicom_.stored > 0 ? static_cast<double>(dicom_.storedBytes) / 1e6 / double(dicom_.stored) : 0, 0.001);
        f.verdict = Format("The senders are slow: %.0f%% of each C-STORE cycle (%.0f of %.0f ms per instance, means) "
                           "passes between two instances of an association",
                           f.shareOfCycle * 100, gap.meanMs, cycle);
        f.explanation = "The gap is " + MeanAndTail(gap) + ", Orthanc's store " + MeanAndTail(server) +
                        ". The gap holds the C-STORE answer going back, the sender preparing its next instance, "
                        "and the dataset's transfer; Orthanc's DICOM workers are not all busy and the gaps do not "
                        "sit at the delayed-ACK timer, so the time is the sender's or the network's.";
        if (input_.dicomTcpNoDelay)
        {
          f.fix.action = "Look at the sender: its own pacing or queue, its disk, the network between (over a "
                         "long link, Nagle's algorithm costs a round trip: " +
                         std::string(SenderNoDelayAdvice(SenderSoftware::Unknown)) + ")";
          f.fix.effect = "not measurable from Orthanc: the time is spent outside it";
        }
        else
        {
          // A part of each gap may still be Orthanc's answer waiting for the sender's delayed ACK.
          f.fix.action = "Start Orthanc with TCP_NODELAY=1 in its environment (systemd: Environment=TCP_NODELAY=1 "
                         "in a drop-in; docker: -e TCP_NODELAY=1), so that Orthanc's answers leave at once; then "
                         "look at the sender: its own pacing or queue, its disk, the network between, and " +
                         std::string(SenderNoDelayAdvice(SenderSoftware::Unknown));
          f.fix.effect = "the part of each gap that is Orthanc's answer waiting, if any; the rest is the sender's";
        }
        f.confidence = input_.dicomTcpNoDelay ? "high" : "medium";
        f.confidenceReason = input_.dicomTcpNoDelay
                               ? "TCP_NODELAY is in effect on Orthanc's side, the workers are free"
                               : "the gaps are not at the delayed-ACK timer; without TCP_NODELAY on Orthanc's side "
                                 "a part of each gap may still be its answer's stall";
      }

      void HttpThreadsSaturated()
      {
        const char* id = "http-threads-saturated";
        const PhaseFigures& server = rest_[Phase::ServerTotal];
        if (rest_.stored < kMinimumSamples)
        {
          Check(id, false, Format("not judged: %.0f HTTP instances", double(rest_.stored)));
          return;
        }
        const double threads = input_.configuration.httpThreadsCount;
        const double busy = input_.activeSeconds > 0 ? server.sumMs / 1000 / input_.activeSeconds : 0;
        // Now, or in the samples of the span: a reader's own request waits for a thread when they are
        // all held, and may find the queue drained once served.
        const double now = static_cast<double>(std::max<int64_t>(0, input_.httpConnectionsNow));
        const double connections = std::max(now, static_cast<double>(input_.connections.httpMax));
        const bool queued = connections > threads;
        // A connection beyond HttpThreadsCount waits for a thread: CivetWeb serves one connection per
        // thread, keep-alive requests included, and queues the others. Without a queue to see now,
        // only threads that were nearly always busy storing say the same.
        if (!queued && busy < kHttpBusyShare * threads)
        {
          Check(id, false,
                Format("%.2f HTTP threads busy storing on average, %.0f connections open at most (%.0f now), for "
                       "HttpThreadsCount %.0f",
                       busy, connections, now, threads));
          return;
        }
        Check(id, true,
              Format("%.2f HTTP threads busy storing on average, %.0f connections open at most (%.0f now), for %.0f",
                     busy, connections, now, threads));
        const double waiting = queued ? connections / threads - 1 : 0;
        Finding& f = Add(id, "rest", waiting * server.meanMs, CostKind::Estimated, server.meanMs * (1 + waiting));
        f.verdict = Format("Orthanc's HTTP threads are all busy (HttpThreadsCount %.0f, %.0f client connections "
                           "open): uploads wait for a thread before Orthanc reads them",
                           threads, connections);
        f.evidence["httpThreadsBusyOnAverage"] = Round(busy, 0.01);
        f.evidence["HttpThreadsCount"] = input_.configuration.httpThreadsCount;
        f.evidence["httpConnectionsOpenNow"] = input_.httpConnectionsNow;
        f.evidence["httpConnectionsOpenAtMost"] = input_.connections.httpMax;
        f.evidence["connectionSamples"] = input_.connections.samples;
        f.evidence["samplesWithMoreConnectionsThanThreads"] = input_.connections.httpOverThreads;
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.explanation = "Orthanc's web server (CivetWeb) gives each connection a thread for as long as it stays "
                        "open, keep-alive included; beyond HttpThreadsCount, connections wait unanswered, and no "
                        "plugin sees that wait. The cost is estimated, and low: each waiting connection queues "
                        "behind at least the stores in progress (connections per thread, minus one, times "
                        "serverTotal's mean).";
        f.fix.configuration.emplace_back("HttpThreadsCount",
                                         static_cast<unsigned int>(std::max(threads * 2, std::ceil(connections) + 1)));
        f.fix.action = "Raise HttpThreadsCount above the number of simultaneous clients (Orthanc restart)";
        f.fix.effect = "Requests stop queueing for a thread: their slowest (p99) take about a tenth of the time, "
                       "the instances per second rise by about a third, and the median request takes longer as "
                       "more run at once (measured with 8 clients, 2 threads against 16: "
                       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after)";
        f.confidence = queued ? "high" : "medium";
        f.confidenceReason = queued ? "more client connections were open than Orthanc has HTTP threads (right now, or "
                                      "in the samples taken once a second)"
                                    : "the threads were busy storing most of the time, but no queue is visible now";
      }

      bool TranscodingBound()
      {
        const char* id = "transcoding-bound";
        const TransportFigures& all = input_.all;
        const PhaseFigures& transcode = all[Phase::Transcode];
        const PhaseFigures& preStore = all[Phase::PreStore];
        const PhaseFigures& server = all[Phase::ServerTotal];
        if (all.stored < kMinimumSamples)
        {
          Check(id, false, Format("not judged: %.0f instances stored", double(all.stored)));
          return false;
        }
        const bool measured = transcode.count >= kMinimumSamples;
        const bool inferred = !measured && input_.configuration.ingestTranscoding && !input_.transcoderHook;
        const double cost = measured ? transcode.meanMs : preStore.meanMs;
        if (!(measured || inferred) || cost < (measured ? kTranscodeMs : kPreStoreMs) ||
            cost < kShareOfServer * server.meanMs)
        {
          Check(id, false,
                measured   ? Format("transcode mean %.1f ms of serverTotal %.1f ms", transcode.meanMs, server.meanMs)
                : inferred ? Format("IngestTranscoding is set; preStore mean %.1f ms of serverTotal %.1f ms",
                                    preStore.meanMs, server.meanMs)
                           : "no transcoding measured, IngestTranscoding is not set");
          return false;
        }
        Check(id, true,
              std::string(measured ? "transcode" : "preStore (IngestTranscoding set)") +
                Format(" mean %.1f ms of serverTotal %.1f ms", cost, server.meanMs));
        Finding& f = Add(id, "all", cost, CostKind::Measured, AllCycleMs());
        const std::string target = input_.configuration.ingestTranscodingSyntax;
        const PhaseFigures& timed = measured ? transcode : preStore;
        f.verdict =
          Format("Transcoding on ingest takes %.1f ms of each instance's %.1f ms in Orthanc", cost, server.meanMs) +
          (target.empty() ? "" : " (IngestTranscoding " + target + ")") + HeldBy(timed, "");
        if (PartsKnown(timed))
        {
          f.evidence[measured ? "transcodeParts" : "preStoreParts"] = PartsEvidence(timed);
        }
        f.evidence["IngestTranscoding"] = target.empty() ? Evidence() : Evidence(target);
        f.evidence["transcode"] = measured ? PhaseEvidence(transcode) : Evidence();
        f.evidence["preStore"] = PhaseEvidence(preStore);
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["transcodedByAnEarlierPlugin"] = all.transcodedWithoutHook;
        f.evidence["TranscodeTiming"] = TranscodeTimingName(input_.configuration.transcodeTiming);
        f.explanation = measured ? "The transcode phase is timed (IngestPerf.TranscodeTiming)."
                                 : "IngestTranscoding is set and preStore, which contains the transcoding, is long; "
                                   "set IngestPerf.TranscodeTiming to FallThrough to time it on its own.";
        if (all.transcodedWithoutHook > 0)
        {
          f.explanation += " Some instances were transcoded by a plugin loaded before this one (GDCM...).";
        }
        f.fix.action = "Transcode later, off the ingest path (a job or a Lua/plugin on StableSeries), or choose a "
                       "cheaper IngestTranscoding syntax, or a faster transcoder plugin";
        f.fix.effect = "Removes the transcode from each instance's store: with JPEG lossless, each store about 4 "
                       "times shorter and about 3.5 times the instances per second (measured: "
                       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after)";
        f.confidence = measured ? "high" : "medium";
        f.confidenceReason = measured ? "the transcode phase is measured"
                                      : "preStore holds the transcoding and the other pre-store steps (parsing, "
                                        "filters); the transcoding is not timed on its own";
        return true;
      }

      // Orthanc's threads ready to run but without a CPU: other processes or threads on its cores, or
      // a CPU quota (a VM's steal time shows the same). The run delay of the storing thread, over the
      // instances whose phases were split.
      void WaitingForCpu()
      {
        const char* id = "waiting-for-cpu";
        const PhaseFigures& server = input_.all[Phase::ServerTotal];
        const PartFigures& parts = server.parts;
        if (parts.sampled < kMinimumSplit || parts.runDelaySampled < kMinimumSplit)
        {
          Check(id, false,
                Format("not judged: %.0f instances with their phases split, %.0f with a run delay (%.0f needed)",
                       double(parts.sampled), double(parts.runDelaySampled), double(kMinimumSplit)));
          return;
        }
        if (parts.waitingForCpuMs < kWaitingMs || parts.WaitingShare() < kWaitingShare)
        {
          Check(id, false,
                Format("waiting for a CPU %.2f ms of serverTotal %.1f ms (%.0f%%) over %.0f split instances",
                       parts.waitingForCpuMs, parts.meanMs, 100 * parts.WaitingShare(), double(parts.sampled)));
          return;
        }
        Check(id, true,
              Format("waiting for a CPU %.1f ms of serverTotal %.1f ms (%.0f%%) over %.0f split instances",
                     parts.waitingForCpuMs, parts.meanMs, 100 * parts.WaitingShare(), double(parts.sampled)));
        // The share measured on the split instances, applied to every instance's store.
        const double cost = parts.WaitingShare() * server.meanMs;
        Finding& f = Add(id, "all", cost, CostKind::Measured, AllCycleMs());
        f.verdict = Format("Waiting for a CPU: Orthanc's threads wait %.1f ms of each instance's %.1f ms in Orthanc "
                           "(%.0f%%) ready to run, without a CPU",
                           cost, server.meanMs, 100 * parts.WaitingShare());
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["serverTotalParts"] = PartsEvidence(server);
        for (const Phase phase : {Phase::PreStore, Phase::Persist})
        {
          if (PartsKnown(input_.all[phase]))
          {
            f.evidence[std::string(DefinitionOf(phase).name) + "Parts"] = PartsEvidence(input_.all[phase]);
          }
        }
        f.explanation = "The storing thread's run delay (the kernel's schedstat) between the bounds of each phase: "
                        "time it was ready to run while other threads or processes had the CPUs. " +
                        std::string("Orthanc's store is ") + PartsText(server) + ".";
        f.fix.action = "Give Orthanc CPU: move, or lower the priority (nice) of, what runs beside it on the same "
                       "cores; give its machine or container more cores or a higher CPU quota (on a virtual "
                       "machine, CPU steal by the host shows as this too)";
        f.fix.effect = Format("Each store shortens by the wait, %.0f%% of it: the time is not Orthanc's work",
                              100 * parts.WaitingShare());
        f.confidence = parts.sampled >= 4 * kMinimumSplit ? "high" : "medium";
        f.confidenceReason = Format(
          "measured on %.0f instances whose phases were split (IngestPerf.PhasePartsSampling)", double(parts.sampled));
      }

      // What the split of a storage phase says of who holds it, for a verdict: "blocked (disk,
      // database...)", "on a CPU" or "waiting for a CPU"; "" when not split.
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


      // The OnStored wait per stored instance: onStoredWait is measured for the instances whose change
      // came first, so its mean stands for those only; spread over every instance stored.
      double OnStoredWaitPerInstanceMs(const TransportFigures& figures) const
      {
        const PhaseFigures& wait = figures[Phase::OnStoredWait];
        const uint64_t persisted = figures[Phase::Persist].count;
        return persisted == 0 ? 0.0 : wait.meanMs * static_cast<double>(wait.count) / static_cast<double>(persisted);
      }

      static std::string Names(const std::vector<std::string>& names)
      {
        std::string text;
        for (const std::string& name : names)
        {
          text += (text.empty() ? "" : ", ") + name;
        }
        return text.empty() ? std::string("(none)") : text;
      }

      bool PythonRegisters(const char* hook) const
      {
        const std::vector<std::string>& hooks = input_.configuration.pythonCallbacks;
        return std::find(hooks.begin(), hooks.end(), hook) != hooks.end();
      }

      // " (orthanc-python's script registers OnStoredInstance)" when it does, else "".
      std::string PythonText(const char* hook) const
      {
        return PythonRegisters(hook) ? std::string(" (orthanc-python's script registers ") + hook + ")" : "";
      }

      static Evidence NameList(const std::vector<std::string>& names)
      {
        Evidence list = Evidence::List();
        for (const std::string& name : names)
        {
          list.Append(name);
        }
        return list;
      }

      // The site's own plugins: their instance filters and OnStoredInstance callbacks, timed between
      // this plugin's two callbacks of each chain (the plugins loaded after it), and the time between
      // the index commit and this plugin's OnStored (the plugins loaded before it, or the OnStored lock).
      // Orthanc runs every plugin's OnStoredInstance under one lock: a slow one holds every store.
      bool SiteCallbacks()
      {
        const char* id = "site-callbacks";
        const TransportFigures& all = input_.all;
        const PhaseFigures& server = all[Phase::ServerTotal];
        if (all.stored < kMinimumSamples)
        {
          Check(id, false, Format("not judged: %.0f instances stored", double(all.stored)));
          return false;
        }
        const PhaseFigures& filters = all[Phase::OtherFilters];
        const PhaseFigures& stored = all[Phase::OtherOnStored];
        const PhaseFigures& wait = all[Phase::OnStoredWait];
        const double later = filters.meanMs + stored.meanMs;
        const double earlier = OnStoredWaitPerInstanceMs(all);
        const double cost = later + earlier;
        const std::string seen = Format("otherFilters %.1f + otherOnStored %.1f + onStoredWait %.1f ms per instance "
                                        "of serverTotal %.1f ms",
                                        filters.meanMs, stored.meanMs, earlier, server.meanMs);
        if (cost < kCallbacksMs || cost < kShareOfServer * server.meanMs)
        {
          Check(id, false, seen);
          return false;
        }
        Check(id, true, seen);
        Finding& f = Add(id, "all", cost, CostKind::Measured, AllCycleMs());
        std::string where;
        if (stored.meanMs >= filters.meanMs && stored.meanMs >= earlier)
        {
          where = Format("their OnStoredInstance callbacks take %.1f ms", stored.meanMs) + " (" +
                  Names(input_.pluginsAfter) + ", loaded after this plugin)";
        }
        else if (filters.meanMs >= earlier)
        {
          where = Format("their instance filters (IncomingDicomInstanceFilter) take %.1f ms", filters.meanMs) + " (" +
                  Names(input_.pluginsAfter) + ", loaded after this plugin)";
        }
        else
        {
          where = Format("%.1f ms pass between the index commit and this plugin's OnStoredInstance", wait.meanMs) +
                  (input_.pluginsBefore.empty()
                     ? std::string(" (Orthanc's OnStored lock, held while other stores' callbacks run)")
                     : " (the OnStoredInstance callbacks of " + Names(input_.pluginsBefore) +
                         ", loaded before this plugin, or Orthanc's OnStored lock)");
        }
        f.verdict =
          Format("The site's plugin callbacks: %.1f ms of each instance's %.1f ms in Orthanc; ", cost, server.meanMs) +
          where + PythonText("OnStoredInstance");
        f.evidence["otherFilters"] = filters.count > 0 ? PhaseEvidence(filters) : Evidence();
        f.evidence["otherOnStored"] = stored.count > 0 ? PhaseEvidence(stored) : Evidence();
        f.evidence["onStoredWait"] = wait.count > 0 ? PhaseEvidence(wait) : Evidence();
        f.evidence["onStoredWaitPerInstanceMs"] = Round(earlier);
        if (PartsKnown(stored))
        {
          f.evidence["otherOnStoredParts"] = PartsEvidence(stored);
        }
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["pluginsLoadedBefore"] = NameList(input_.pluginsBefore);
        f.evidence["pluginsLoadedAfter"] = NameList(input_.pluginsAfter);
        f.evidence["pythonCallbacks"] = NameList(input_.configuration.pythonCallbacks);
        f.explanation = "Orthanc calls the plugins' instance filters and OnStoredInstance callbacks on the storing "
                        "thread, in the order the plugins registered them, before it answers the sender; this plugin "
                        "times what lies between its own two callbacks of each chain (otherFilters, otherOnStored) "
                        "and, from the instance's NewInstance change, the time between the index commit and its "
                        "OnStoredInstance (onStoredWait). Every plugin's OnStoredInstance runs under one lock of "
                        "Orthanc's, so a slow one holds the stores of every sender.";
        f.fix.action = "Make these callbacks return at once: hand the slow work (forwarding, web service calls, "
                       "edits) to a queue, a thread or an Orthanc job that runs after the instance is stored "
                       "(orthanc-python: a thread of the script's own, or OnChange, which orthanc-python runs on a "
                       "queue of its own)";
        f.fix.effect = "Not a configuration change: each store shortens by the callbacks' time, and the stores of "
                       "the other senders stop waiting for them (the rule's scenario, an orthanc-python "
                       "OnStoredInstance of 30 ms: docs/diagnosis.md#site-callbacks)";
        if (later >= earlier)
        {
          f.confidence = "high";
          f.confidenceReason = "timed between this plugin's two callbacks of Orthanc's chain: nothing but the other "
                               "plugins' callbacks runs there";
        }
        else
        {
          f.confidence = input_.pluginsBefore.empty() ? "low" : "medium";
          f.confidenceReason = "the time between the index commit and this plugin's OnStoredInstance holds the "
                               "callbacks of the plugins loaded before it and the wait for Orthanc's OnStored lock, "
                               "not told apart; list this plugin first in \"Plugins\" to time the callbacks alone";
        }
        return true;
      }


      // Persist longer for C-STORE than for HTTP, on one storage and one index: what persist holds for
      // C-STORE alone is the C-STORE filters (IncomingCStoreInstanceFilter), which Orthanc calls after
      // every instance filter and around which this plugin has no hook (it registers no C-STORE filter).
      bool CStoreFilters()
      {
        const char* id = "cstore-filters";
        const PhaseFigures& dicom = dicom_[Phase::Persist];
        const PhaseFigures& rest = rest_[Phase::Persist];
        const PhaseFigures& server = dicom_[Phase::ServerTotal];
        if (dicom.count < kMinimumSamples || rest.count < kMinimumSamples)
        {
          Check(id, false,
                Format("not judged: persist of %.0f C-STORE and %.0f HTTP instances (both needed, %.0f each)",
                       double(dicom.count), double(rest.count), double(kMinimumSamples)));
          return false;
        }
        const double extra = dicom.p50Ms - rest.p50Ms;
        const std::string seen =
          Format("persist p50 %.1f ms over C-STORE, %.1f ms over HTTP, C-STORE serverTotal p50 %.1f ms", dicom.p50Ms,
                 rest.p50Ms, server.p50Ms);
        if (extra < kCallbacksMs || extra < kShareOfServer * server.p50Ms)
        {
          Check(id, false, seen);
          return false;
        }
        Check(id, true, seen);
        Finding& f = Add(id, "dicom", extra, CostKind::Measured, CycleMs(dicom_));
        const std::vector<std::string> plugins = AllOtherPlugins();
        f.verdict = Format("C-STORE filters: each C-STORE instance spends %.1f ms more in persist than an HTTP one "
                           "(p50 %.1f against %.1f ms), on the same storage and index",
                           extra, dicom.p50Ms, rest.p50Ms) +
                    (plugins.empty() ? std::string() : "; plugins loaded: " + Names(plugins)) +
                    PythonText("IncomingCStoreInstanceFilter");
        f.evidence["dicomPersist"] = PhaseEvidence(dicom);
        f.evidence["restPersist"] = PhaseEvidence(rest);
        f.evidence["otherPlugins"] = NameList(plugins);
        f.evidence["pythonCallbacks"] = NameList(input_.configuration.pythonCallbacks);
        f.explanation = "Orthanc calls the plugins' C-STORE filters (IncomingCStoreInstanceFilter) for C-STORE "
                        "instances only, after the instance filters and before the storage write, so their time "
                        "is in persist; the storage write and the index transaction are the same for both "
                        "transports. This plugin registers no C-STORE filter (Orthanc stops at the first that "
                        "accepts), so it cannot time them on their own.";
        f.fix.action = "Make the C-STORE filter of the site's plugin (IncomingCStoreInstanceFilter: in "
                       "orthanc-python, the function the script registers as one) decide from the instance alone, "
                       "without network calls or heavy work; what must wait can run after the instance is stored";
        f.fix.effect = "Not a configuration change: each C-STORE instance shortens by the difference (the rule's "
                       "scenario, an orthanc-python C-STORE filter of 30 ms: docs/diagnosis.md#cstore-filters)";
        f.confidence = PythonRegisters("IncomingCStoreInstanceFilter") ? "high" : plugins.empty() ? "low" : "medium";
        f.confidenceReason = "persist differs between the transports; the C-STORE filters are the only step of "
                             "Orthanc's store that C-STORE alone runs, but they are not timed on their own" +
                             std::string(PythonRegisters("IncomingCStoreInstanceFilter")
                                           ? ", and the site's orthanc-python script registers one"
                                           : "");
        return true;
      }

      std::vector<std::string> AllOtherPlugins() const
      {
        std::vector<std::string> all = input_.pluginsBefore;
        all.insert(all.end(), input_.pluginsAfter.begin(), input_.pluginsAfter.end());
        return all;
      }

      // The HTTP receive blocked while Lua's callbacks hold Orthanc's Lua lock: Orthanc takes that lock in
      // every HTTP request's filter, before the body is read, and holds it while Lua's OnStoredInstance,
      // OnChange and stable-resource callbacks run on Lua's thread.
      bool LuaLock()
      {
        const char* id = "lua-lock";
        const PhaseFigures& receive = rest_[Phase::Receive];
        const PhaseFigures& server = rest_[Phase::ServerTotal];
        const std::vector<std::string>& callbacks = input_.configuration.luaCallbacks;
        if (callbacks.empty())
        {
          Check(id, false, "no Lua callback defined (LuaScripts)");
          return false;
        }
        if (receive.count < kMinimumSamples || receive.meanMs < kUploadMs ||
            receive.meanMs < kDominantShare * server.meanMs)
        {
          Check(id, false,
                Format("receive %.1f ms of serverTotal %.1f ms (%.0f samples)", receive.meanMs, server.meanMs,
                       double(receive.count)));
          return false;
        }
        if (PartsKnown(receive) && DominantPart(receive.parts) != Dominant::Blocked)
        {
          Check(id, false, Format("receive %.1f ms, ", receive.meanMs) + PartsText(receive) + ": not a wait");
          return false;
        }
        Check(id, true,
              Format("receive %.1f ms of serverTotal %.1f ms with Lua callbacks", receive.meanMs, server.meanMs));
        Finding& f = Add(id, "rest", receive.meanMs, CostKind::Measured, CycleMs(rest_));
        f.verdict =
          Format("Orthanc's Lua lock: each HTTP request waits %.1f ms before its body is read", receive.meanMs) +
          " while Lua's callbacks (" + Names(callbacks) + ") hold the lock" +
          (PartsKnown(receive) ? Format(" (%.0f%% of it blocked)", 100 * receive.parts.BlockedShare()) : "");
        f.evidence["receive"] = PhaseEvidence(receive);
        if (PartsKnown(receive))
        {
          f.evidence["receiveParts"] = PartsEvidence(receive);
        }
        f.evidence["luaCallbacks"] = NameList(callbacks);
        f.evidence["LuaScripts"] = input_.configuration.luaScripts;
        f.explanation = "Orthanc runs every Lua callback under one lock, and takes it in the filter of every HTTP "
                        "request, whether or not the scripts define IncomingHttpRequestFilter; Lua's "
                        "OnStoredInstance runs later on Lua's own thread (C-STORE does not wait for it), holding "
                        "the lock: the next HTTP request waits in receive, before its body is read.";
        f.fix.action = "Make the Lua callbacks (" + Names(callbacks) +
                       ") return at once: no HTTP calls or loops in them; move slow work to a job (Orthanc's "
                       "/modalities/.../store with Asynchronous) or to a plugin's own thread";
        f.fix.effect = "Not a configuration change: each HTTP request stops waiting for the lock (the rule's "
                       "scenario, a Lua OnStoredInstance of 30 ms: docs/diagnosis.md#lua-lock)";
        f.confidence = "medium";
        f.confidenceReason = "the Lua callbacks are configured and the HTTP receive waits; a slow upload would look "
                             "the same (the wait is not timed on its own)";
        return true;
      }


      // The site's ReceivedInstanceCallback, which Orthanc lets one plugin hold: where the site's
      // orthanc-python script registers it, this plugin leaves it, and it runs before the instance
      // filters, inside HTTP receive and the C-STORE associationGap, with no hook of this plugin around it.
      bool SiteHoldsReceivedInstanceCallback() const
      {
        return !input_.receivedInstanceHeld && PythonRegisters("ReceivedInstanceCallback");
      }

      bool SiteReceivedInstanceCallback()
      {
        const char* id = "received-instance-callback";
        if (!SiteHoldsReceivedInstanceCallback())
        {
          Check(id, false,
                input_.receivedInstanceHeld ? "this plugin holds the ReceivedInstanceCallback"
                                            : "no site script registers the ReceivedInstanceCallback");
          return false;
        }
        const PhaseFigures& receive = rest_[Phase::Receive];
        const PhaseFigures& gap = dicom_[Phase::AssociationGap];
        const bool http = receive.count >= kMinimumSamples && receive.meanMs >= kUploadMs &&
                          receive.meanMs >= kDominantShare * rest_[Phase::ServerTotal].meanMs;
        // With TCP_NODELAY on Orthanc's side, a gap at the delayed-ACK timer is the sender's stall instead.
        const bool dicom = gap.count >= kMinimumSamples && input_.dicomTcpNoDelay && gap.p50Ms >= kSlowGapMs &&
                           ShareAtDelayedAckTimers() < kStallShareOfGaps;
        const std::string seen =
          Format("HTTP receive mean %.1f ms, C-STORE associationGap p50 %.1f ms", receive.meanMs, gap.p50Ms);
        if (!http && !dicom)
        {
          Check(id, false, seen);
          return false;
        }
        Check(id, true, seen);
        const double cost = std::max(http ? receive.meanMs : 0.0, dicom ? gap.p50Ms : 0.0);
        Finding& f = Add(id,
                         http && dicom ? "all"
                         : http        ? "rest"
                                       : "dicom",
                         cost, CostKind::Measured,
                         http && dicom ? AllCycleMs()
                         : http        ? CycleMs(rest_)
                                       : CycleMs(dicom_));
        std::string where;
        if (http)
        {
          where += Format("HTTP receive mean %.1f ms", receive.meanMs);
        }
        if (dicom)
        {
          where += (where.empty() ? "" : ", ") + Format("C-STORE associationGap p50 %.1f ms", gap.p50Ms);
        }
        f.verdict = "The site's ReceivedInstanceCallback (orthanc-python's script registers it): it runs before the "
                    "store, in " +
                    where + ", which no hook of this plugin separates from the upload or the sender";
        f.evidence["receive"] = receive.count > 0 ? PhaseEvidence(receive) : Evidence();
        f.evidence["associationGap"] = gap.count > 0 ? PhaseEvidence(gap) : Evidence();
        if (PartsKnown(receive))
        {
          f.evidence["receiveParts"] = PartsEvidence(receive);
        }
        f.evidence["pythonCallbacks"] = NameList(input_.configuration.pythonCallbacks);
        f.explanation = "Orthanc lets one plugin hold the ReceivedInstanceCallback and calls it first in its store, "
                        "before parsing the instance; this plugin leaves it to the site's script, so the callback's "
                        "time lies in HTTP receive and the C-STORE gap, with the client's and the sender's.";
        f.fix.action = "Make the site's ReceivedInstanceCallback return at once: only the edit of the instance "
                       "there, anything slow (lookups, web services) after the store or in a job";
        f.fix.effect = "Not a configuration change: each instance arrives sooner by the callback's time (the "
                       "rule's scenario, an orthanc-python ReceivedInstanceCallback of 20 ms: "
                       "docs/diagnosis.md#received-instance-callback)";
        f.confidence = "medium";
        f.confidenceReason = "the site's script registers the callback and the phase that holds it is long; the "
                             "callback is not timed on its own, and a slow upload or sender looks the same";
        return true;
      }

      void StorageBound(bool cstoreFilters)
      {
        const char* id = "storage-bound";
        const TransportFigures& all = input_.all;
        const PhaseFigures& server = all[Phase::ServerTotal];
        if (all.stored < kMinimumSamples)
        {
          Check(id, false, Format("not judged: %.0f instances stored", double(all.stored)));
          return;
        }
        if (input_.timedStorageActive)
        {
          const PhaseFigures& prepare = all[Phase::StoragePrepare];
          const PhaseFigures& write = all[Phase::StorageWrite];
          const double cost = prepare.meanMs + write.meanMs;
          if (cost < kStorageMs || cost < kDominantShare * server.meanMs)
          {
            Check(id, false,
                  Format("storagePrepare %.1f + storageWrite %.1f ms of serverTotal %.1f ms", prepare.meanMs,
                         write.meanMs, server.meanMs));
            return;
          }
          const PhaseFigures& larger = prepare.meanMs > write.meanMs ? prepare : write;
          if (PartsKnown(larger) && DominantPart(larger.parts) == Dominant::Waiting)
          {
            Check(id, false,
                  Format("storagePrepare %.1f + storageWrite %.1f ms, mostly waiting for a CPU: see waiting-for-cpu",
                         prepare.meanMs, write.meanMs));
            return;
          }
          Check(id, true,
                Format("storagePrepare %.1f + storageWrite %.1f ms of serverTotal %.1f ms", prepare.meanMs,
                       write.meanMs, server.meanMs));
          Finding& f = Add(id, "all", cost, CostKind::Measured, AllCycleMs());
          const bool compression = prepare.meanMs > write.meanMs && input_.configuration.storageCompression;
          f.evidence["storagePrepare"] = PhaseEvidence(prepare);
          f.evidence["storageWrite"] = PhaseEvidence(write);
          for (const Phase phase : {Phase::StoragePrepare, Phase::StorageWrite})
          {
            if (PartsKnown(all[phase]))
            {
              f.evidence[std::string(DefinitionOf(phase).name) + "Parts"] = PartsEvidence(all[phase]);
            }
          }
          f.evidence["serverTotal"] = PhaseEvidence(server);
          f.evidence["storageWriteMegabytesPerSecond"] = Round(input_.storageCreateMegabytesPerSecond, 0.01);
          f.evidence["StorageCompression"] = input_.configuration.storageCompression;
          f.evidence["SyncStorageArea"] = input_.configuration.syncStorageArea;
          if (compression)
          {
            f.verdict = Format("Storage-bound: compressing the files (StorageCompression) takes %.1f ms of each "
                               "instance's %.1f ms in Orthanc",
                               prepare.meanMs, server.meanMs) +
                        HeldBy(prepare, "");
            f.explanation = "storagePrepare (MD5 and compression, before the first write) dominates the storage.";
            f.fix.configuration.emplace_back("StorageCompression", false);
            f.fix.action = "Set StorageCompression to false (files already stored stay readable)";
            f.fix.effect =
              "Removes the compression from each store, at the cost of the disk space it saved: for "
              "2 MB instances, each store about 6 times shorter and about 7 times the instances per "
              "second (measured: docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after)";
          }
          else
          {
            f.verdict = Format("Storage-bound: writing the files takes %.1f ms of each instance's %.1f ms in Orthanc "
                               "(%.1f MB/s)",
                               write.meanMs, server.meanMs, input_.storageCreateMegabytesPerSecond) +
                        HeldBy(write, "the disk of StorageDirectory");
            f.explanation = "storageWrite (the storage area's create calls) dominates the store.";
            f.fix.action = "A faster storage for StorageDirectory (local SSD rather than a network share)" +
                           std::string(input_.configuration.syncStorageArea
                                         ? "; SyncStorageArea false trades durability on power loss for speed"
                                         : "");
            f.fix.effect = "Not a configuration change: each store shortens by the storageWrite time a faster "
                           "storage saves (the rule's scenario, a disk slow to flush: "
                           "docs/diagnosis.md#storage-bound)";
          }
          f.confidence = "high";
          f.confidenceReason = "the storage is timed by IngestPerf.TimedStorage";
          return;
        }
        const PhaseFigures& persist = all[Phase::Persist];
        if (cstoreFilters && rest_[Phase::Persist].meanMs < kPersistUntimedMs)
        {
          Check(id, false,
                Format("persist %.1f ms over HTTP: the longer C-STORE persist is the cstore-filters rule's",
                       rest_[Phase::Persist].meanMs));
          return;
        }
        // The part of persist after the index commit is the site-callbacks rule's.
        const double onStoredWait = OnStoredWaitPerInstanceMs(all);
        if (persist.meanMs - onStoredWait < kPersistUntimedMs ||
            persist.meanMs - onStoredWait < kDominantShare * server.meanMs)
        {
          Check(id, false,
                Format("persist %.1f ms (%.1f of it after the index commit) of serverTotal %.1f ms (untimed storage: "
                       "%.0f ms needed)",
                       persist.meanMs, onStoredWait, server.meanMs, kPersistUntimedMs));
          return;
        }
        const bool split = PartsKnown(persist);
        const Dominant dominant = split ? DominantPart(persist.parts) : Dominant::Blocked;
        if (split && dominant == Dominant::Waiting)
        {
          Check(id, false,
                Format("persist %.1f ms of serverTotal %.1f ms, ", persist.meanMs, server.meanMs) + PartsText(persist) +
                  ": see waiting-for-cpu");
          return;
        }
        Check(id, true,
              Format("persist %.1f ms of serverTotal %.1f ms", persist.meanMs, server.meanMs) +
                (split ? ", " + PartsText(persist) : ""));
        Finding& f = Add(id, "all", persist.meanMs, CostKind::Measured, AllCycleMs());
        const std::string index = input_.configuration.indexPluginSection.empty()
                                    ? std::string("SQLite")
                                    : input_.configuration.indexPluginSection;
        const std::string& storagePlugin = input_.storageOwner;
        const std::string storage = storagePlugin.empty() ? "the disk of StorageDirectory" : storagePlugin;
        if (!split)
        {
          f.verdict = Format("Storage- or index-bound: writing each instance (persist) takes %.1f ms of its %.1f ms "
                             "in Orthanc",
                             persist.meanMs, server.meanMs);
        }
        else if (dominant == Dominant::OnCpu)
        {
          f.verdict = Format("On a CPU in persist: writing each instance takes %.1f ms of its %.1f ms in Orthanc, "
                             "%.0f%% of it on a CPU",
                             persist.meanMs, server.meanMs, 100 * persist.parts.OnCpuShare()) +
                      (input_.configuration.storageCompression ? " (StorageCompression compresses every file)"
                                                               : " (hashing, the index's own work)");
        }
        else
        {
          f.verdict = Format("Blocked in persist: writing each instance takes %.1f ms of its %.1f ms in Orthanc, "
                             "%.0f%% of it blocked",
                             persist.meanMs, server.meanMs, 100 * persist.parts.BlockedShare()) +
                      " (waiting for the storage, " + storage + ", or the index, " + index + ")";
        }
        f.evidence["persist"] = PhaseEvidence(persist);
        if (split)
        {
          f.evidence["persistParts"] = PartsEvidence(persist);
        }
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["index"] = index;
        f.evidence["storagePlugin"] = storagePlugin.empty() ? Evidence() : Evidence(storagePlugin);
        f.evidence["StorageCompression"] = input_.configuration.storageCompression;
        f.explanation = "persist holds the storage write and the index transaction; without the timed storage "
                        "Orthanc gives no hook between them.";
        if (split)
        {
          f.explanation += " Where its time goes, from the storing thread's clocks: " + PartsText(persist) + ".";
        }
        if (split && dominant == Dominant::OnCpu && input_.configuration.storageCompression)
        {
          f.fix.configuration.emplace_back("StorageCompression", false);
          f.fix.action = "Set StorageCompression to false (files already stored stay readable)";
          f.fix.effect = "Removes the compression from each store, at the cost of the disk space it saved "
                         "(docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after)";
          f.confidence = "medium";
          f.confidenceReason = "persist is mostly on a CPU and StorageCompression is on; IngestPerf.TimedStorage "
                               "would time the compression on its own";
          return;
        }
        if (storagePlugin.empty())
        {
          f.fix.configuration.emplace_back("IngestPerf.TimedStorage", true);
          f.fix.action = "Turn on IngestPerf.TimedStorage to split persist into storageWrite and indexUpdate, "
                         "then follow that finding";
          f.fix.effect = "none by itself: it tells which of the two to fix";
        }
        else
        {
          f.fix.action = "The storage area belongs to " + storagePlugin +
                         ", so this plugin cannot time its writes apart: look at its store (the database or "
                         "object store, the network to it) and at the index (" +
                         index + ")";
          f.fix.effect = "Not a configuration change: each store shortens by what a faster storage or index saves";
        }
        f.confidence = split ? "medium" : "low";
        f.confidenceReason = split ? "whether persist is on a CPU, waiting or blocked is measured; the storage and "
                                     "the index are not told apart"
                                   : "storage and index are not told apart";
      }

      void IndexBound()
      {
        const char* id = "index-bound";
        const TransportFigures& all = input_.all;
        const PhaseFigures& index = all[Phase::IndexUpdate];
        const PhaseFigures& server = all[Phase::ServerTotal];
        if (!input_.timedStorageActive)
        {
          Check(id, false, "not judged: indexUpdate needs IngestPerf.TimedStorage");
          return;
        }
        // The part after the index commit is the site-callbacks rule's.
        const double transaction = index.meanMs - OnStoredWaitPerInstanceMs(all);
        if (index.count < kMinimumSamples || transaction < kIndexMs || transaction < kDominantShare * server.meanMs)
        {
          Check(id, false,
                Format("indexUpdate %.1f ms (%.1f of it after the index commit) of serverTotal %.1f ms (%.0f samples)",
                       index.meanMs, index.meanMs - transaction, server.meanMs, double(index.count)));
          return;
        }
        if (PartsKnown(index) && DominantPart(index.parts) == Dominant::Waiting)
        {
          Check(id, false,
                Format("indexUpdate %.1f ms of serverTotal %.1f ms, ", index.meanMs, server.meanMs) + PartsText(index) +
                  ": see waiting-for-cpu");
          return;
        }
        Check(id, true, Format("indexUpdate %.1f ms of serverTotal %.1f ms", index.meanMs, server.meanMs));
        Finding& f = Add(id, "all", index.meanMs, CostKind::Measured, AllCycleMs());
        const std::string backend =
          input_.configuration.indexPluginSection.empty() ? "SQLite" : input_.configuration.indexPluginSection;
        f.verdict = Format("Index-bound: Orthanc's index transaction takes %.1f ms of each instance's %.1f ms",
                           index.meanMs, server.meanMs) +
                    " (" + backend + ")" +
                    HeldBy(index, backend == "SQLite" ? "the disk of the SQLite index, or Orthanc's lock"
                                                      : "the database server, or Orthanc's lock");
        f.evidence["index"] = backend;
        f.evidence["indexUpdate"] = PhaseEvidence(index);
        if (PartsKnown(index))
        {
          f.evidence["indexUpdateParts"] = PartsEvidence(index);
        }
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.explanation = "indexUpdate runs from the end of the last file write to OnStored: the index transaction, "
                        "and the wait for Orthanc's OnStored lock.";
        if (backend == "SQLite")
        {
          f.fix.action = "The SQLite index sits in IndexDirectory: put it on a fast local disk; for many "
                         "concurrent clients, a PostgreSQL index (orthanc-postgresql) scales better";
        }
        else
        {
          f.fix.action = "Look at the database server: its commit latency (synchronous_commit, disk), the network "
                         "to it, its load; the plugin's IndexConnectionsCount on Orthanc 1.12";
        }
        f.fix.effect = "Not a configuration change: each store shortens by the indexUpdate time a faster "
                       "database saves (the rule's scenario, a slow PostgreSQL: docs/diagnosis.md#index-bound)";
        f.confidence = "high";
        f.confidenceReason = "the index transaction is timed between the storage write and OnStored";
      }

      void SlowChangeConsumer()
      {
        const char* id = "slow-change-consumer";
        const PhaseFigures& perInstance = input_.changePerInstanceWhileBacklogged;
        const PhaseFigures& dispatch = input_.all[Phase::ChangeDispatch];
        // A backlog now is the sign during an incident (right after a burst, the change thread has
        // timed one or two changes); once drained, the lag of the changes says the same.
        const bool backlogged =
          input_.changeBacklog >= kBacklog || (dispatch.count >= kMinimumSamples / 2 && dispatch.p50Ms >= kChangeLagMs);
        // Right after a burst the change thread may not have timed a change while others waited: the
        // lag of those it delivered stands for it then.
        const bool timed = perInstance.count > 0;
        const double perChangeMs = timed ? perInstance.meanMs : dispatch.p50Ms;
        if (!backlogged || perChangeMs < kChangePerInstanceMs)
        {
          Check(id, false,
                Format("backlog %.0f, changeDispatch p50 %.1f ms, change thread %.1f ms per instance "
                       "while backlogged",
                       double(input_.changeBacklog), dispatch.p50Ms, perInstance.meanMs));
          return;
        }
        Check(id, true,
              Format("backlog %.0f, change thread %.1f ms per instance", double(input_.changeBacklog), perChangeMs));
        Finding& f = Add(id, "all", perChangeMs, timed ? CostKind::Measured : CostKind::Estimated, -1);
        f.verdict = Format("A slow change consumer: Orthanc's change thread spends %.0f ms per instance in Lua or "
                           "plugins' OnChange, %.0f NewInstance changes wait",
                           perChangeMs, double(input_.changeBacklog));
        f.evidence["newInstanceBacklog"] = input_.changeBacklog;
        f.evidence["perInstanceWhileBacklogged"] = PhaseEvidence(perInstance);
        f.evidence["changeDispatch"] = PhaseEvidence(dispatch);
        f.evidence["LuaScripts"] = input_.configuration.luaScripts;
        f.explanation = "Orthanc delivers changes to Lua and to every plugin's OnChange on one thread. This is off "
                        "the ingest path (the store does not wait), but everything that reacts to new instances "
                        "(routing, auto-forwarding, Lua OnStoredInstance) lags, and the queue grows.";
        f.fix.action = "Find the slow OnChange consumer (Lua scripts, plugins) and make it hand its work to a "
                       "queue or a job instead of doing it on the change thread";
        f.fix.effect = "Off the ingest path: stores do not get faster; what reacts to new instances (routing, "
                       "forwarding, Lua) stops lagging behind them (the rule's scenario: "
                       "docs/diagnosis.md#slow-change-consumer)";
        f.confidence = timed ? "high" : "medium";
        f.confidenceReason = timed ? "the change thread's time per instance is measured while changes wait"
                                   : "changes wait now; the change thread's time per instance is not timed yet, the "
                                     "lag of the changes delivered stands for it";
      }

      void SlowFilters(bool transcoding)
      {
        const char* id = "slow-filters";
        const TransportFigures& all = input_.all;
        const PhaseFigures& preStore = all[Phase::PreStore];
        const PhaseFigures& transcode = all[Phase::Transcode];
        const PhaseFigures& server = all[Phase::ServerTotal];
        if (all.stored < kMinimumSamples)
        {
          Check(id, false, Format("not judged: %.0f instances stored", double(all.stored)));
          return;
        }
        if (transcoding && transcode.count < kMinimumSamples)
        {
          Check(id, false, "preStore is explained by the transcoding finding (not timed on its own)");
          return;
        }
        const double cost = preStore.meanMs - transcode.meanMs;
        if (cost < kPreStoreMs || cost < kShareOfServer * server.meanMs)
        {
          Check(id, false, Format("preStore without transcoding %.1f ms of serverTotal %.1f ms", cost, server.meanMs));
          return;
        }
        Check(id, true, Format("preStore without transcoding %.1f ms of serverTotal %.1f ms", cost, server.meanMs));
        Finding& f = Add(id, "all", cost, CostKind::Measured, AllCycleMs());
        f.verdict = Format("Slow filters: %.1f ms of each instance's %.1f ms in Orthanc pass before the store, in "
                           "Lua or other plugins' instance filters",
                           cost, server.meanMs);
        f.evidence["preStore"] = PhaseEvidence(preStore);
        f.evidence["transcode"] = transcode.count > 0 ? PhaseEvidence(transcode) : Evidence();
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["LuaScripts"] = input_.configuration.luaScripts;
        f.evidence["IngestTranscoding"] =
          input_.configuration.ingestTranscoding ? Evidence(input_.configuration.ingestTranscodingSyntax) : Evidence();
        f.explanation = "preStore runs from the received instance to the last instance filter: DICOM parsing, "
                        "Lua's ReceivedInstanceFilter and IncomingInstanceFilter, other plugins' filters; parsing "
                        "takes well under a millisecond for a 0.5 MB instance.";
        f.fix.action = "Review the Lua filters (ReceivedInstanceFilter, IncomingInstanceFilter) and other "
                       "plugins' filters: no network calls or heavy work there";
        f.fix.effect = "Not a configuration change: each store shortens by the filters' time in preStore, which "
                       "without them is a fraction of a millisecond (the rule's scenario, a slow Lua filter: "
                       "docs/diagnosis.md#slow-filters)";
        f.confidence = input_.configuration.luaScripts > 0 ? "high" : "medium";
        f.confidenceReason = input_.configuration.luaScripts > 0
                               ? "Lua scripts are configured and nothing else in preStore is slow"
                               : "no Lua script is configured: a plugin's filter, or very large instances";
      }

      void SlowUploads(bool luaLock)
      {
        const char* id = "slow-uploads";
        if (luaLock)
        {
          Check(id, false, "the HTTP receive is explained by lua-lock or received-instance-callback");
          return;
        }
        const PhaseFigures& receive = rest_[Phase::Receive];
        const PhaseFigures& server = rest_[Phase::ServerTotal];
        if (receive.count < kMinimumSamples)
        {
          Check(id, false, Format("not judged: %.0f HTTP receive samples", double(receive.count)));
          return;
        }
        if (receive.meanMs < kUploadMs || receive.meanMs < kDominantShare * server.meanMs)
        {
          Check(id, false, Format("receive %.1f ms of serverTotal %.1f ms", receive.meanMs, server.meanMs));
          return;
        }
        Check(id, true, Format("receive %.1f ms of serverTotal %.1f ms", receive.meanMs, server.meanMs));
        Finding& f = Add(id, "rest", receive.meanMs, CostKind::Measured, CycleMs(rest_));
        const double megabytesPerSecond =
          receive.sumMs > 0 ? static_cast<double>(rest_.receivedBytes) / 1e6 / (receive.sumMs / 1000) : 0;
        f.verdict = Format("Slow uploads: HTTP clients take %.0f ms to send each instance (%.1f MB/s), Orthanc "
                           "stores it in %.1f ms",
                           receive.meanMs, megabytesPerSecond, server.meanMs - receive.meanMs);
        f.evidence["receive"] = PhaseEvidence(receive);
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["uploadMegabytesPerSecond"] = Round(megabytesPerSecond, 0.01);
        f.explanation = "receive runs from Orthanc's HTTP request filter (headers read) to the instance received: "
                        "the body's upload by the client and its reading by Orthanc.";
        f.fix.action = "Look at the client and the network: bandwidth, a proxy, the client reading its files "
                       "slowly; several uploads in parallel hide the latency";
        f.fix.effect = "not measurable from Orthanc: the time is spent by the client or the network";
        f.confidence = "high";
        f.confidenceReason = "receive is measured per instance";
      }

      // The sibling of a slow C-STORE sender over HTTP: between the end of a request's store and the
      // next request of its keep-alive connection, Orthanc builds, compresses and sends the answer
      // (on its CPU), then the thread waits for the client (blocked). The split tells whose time it is.
      void SlowHttpClient()
      {
        const char* id = "slow-http-client";
        const TransportFigures* http = &rest_;
        const TransportFigures& plugin = input_.transports[static_cast<size_t>(Transport::Plugin)];
        if (plugin[Phase::RequestGap].count > rest_[Phase::RequestGap].count)
        {
          http = &plugin;  // STOW-RS clients
        }
        const char* transport = http == &rest_ ? "rest" : "plugin";
        const PhaseFigures& gap = (*http)[Phase::RequestGap];
        const PhaseFigures& server = (*http)[Phase::ServerTotal];
        if (gap.count < kMinimumSamples)
        {
          Check(id, false,
                Format("not judged: %.0f gaps between two requests of one HTTP connection (%.0f needed)",
                       double(gap.count), double(kMinimumSamples)));
          return;
        }
        const double cycle = CycleMs(*http);
        const double share = cycle > 0 ? gap.meanMs / cycle : 0;
        if (gap.meanMs < kRequestGapMs || share < kRequestGapShare)
        {
          Check(id, false,
                "requestGap " + MeanAndTail(gap) + Format(", %.0f%% of a %.1f ms cycle", 100 * share, cycle));
          return;
        }
        const bool split = PartsKnown(gap);
        const bool orthancsAnswer = split && gap.parts.OnCpuShare() >= kAnswerCpuShare;
        // Split, the client's time is the blocked part: a gap made long by Orthanc's thread waiting for
        // a CPU (sending the answer late) is waiting-for-cpu's, not the client's.
        const double clientMs = split ? gap.meanMs * gap.parts.BlockedShare() : gap.meanMs;
        if (split && !orthancsAnswer && (clientMs < kRequestGapMs || clientMs < kRequestGapShare * cycle))
        {
          Check(id, false,
                "requestGap " + MeanAndTail(gap) + Format(", %.0f%% of a %.1f ms cycle; ", 100 * share, cycle) +
                  PartsText(gap) + Format(": the client's part %.1f ms", clientMs));
          return;
        }
        Check(id, true,
              "requestGap " + MeanAndTail(gap) + Format(", %.0f%% of a %.1f ms cycle", 100 * share, cycle) +
                (split ? ", " + PartsText(gap) : ""));
        Finding& f = Add(id, transport, gap.meanMs, CostKind::Measured, cycle);
        if (orthancsAnswer)
        {
          f.verdict = Format("Orthanc's answers take the time between requests: %.1f ms of each HTTP instance's "
                             "%.1f ms cycle pass between its store and the next request, %.0f%% of it on Orthanc's CPU "
                             "(building, compressing and sending the answer)",
                             gap.meanMs, cycle, 100 * gap.parts.OnCpuShare());
        }
        else
        {
          f.verdict =
            Format("The HTTP client waits between requests: %.1f ms of each instance's %.1f ms cycle (%.0f%%) "
                   "pass between Orthanc's answer and the client's next request on the same connection",
                   gap.meanMs, cycle, 100 * share);
        }
        f.evidence["requestGap"] = PhaseEvidence(gap);
        if (split)
        {
          f.evidence["requestGapParts"] = PartsEvidence(gap);
        }
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.evidence["answersAcceptingCompression"] = http->answersAcceptingCompression;
        f.evidence["HttpCompressionEnabled"] = input_.configuration.httpCompressionEnabled;
        f.explanation =
          "requestGap runs on Orthanc's HTTP thread from the end of a request's store (OnStored) to the next request "
          "of the same keep-alive connection (its headers read): Orthanc builds, compresses and sends the answer on "
          "its CPU, then waits for the client. ";
        f.explanation +=
          split ? "Its split: " + PartsText(gap) +
                    Format("; Orthanc's CPU in it is %.2f ms, the client's turnaround the rest.", gap.parts.onCpuMs)
                : Format("Split for %.0f of its %.0f gaps (the page shows them), fewer than the %.0f a judgement "
                         "needs: whose time it is is not judged here.",
                         double(gap.parts.sampled), double(gap.count), double(kMinimumSplit));
        if (orthancsAnswer)
        {
          f.fix.configuration.emplace_back("HttpCompressionEnabled", false);
          f.fix.action = "Set HttpCompressionEnabled to false if the clients accept gzip (Orthanc before 1.12.2 "
                         "compresses every answer), or give Orthanc CPU";
          f.fix.effect = Format("Up to the %.2f ms Orthanc spends on a CPU between requests", gap.parts.onCpuMs);
        }
        else
        {
          f.fix.action = "On the client: send the next instance as soon as the answer arrives (what does it do "
                         "between requests: reading files, logging, a rate limit?), or send over several "
                         "connections at once";
          f.fix.effect = Format("Each instance's cycle shortens by up to the client's share of the gap, %.1f ms",
                                split ? gap.parts.blockedMs + gap.parts.waitingForCpuMs : gap.meanMs);
        }
        f.confidence = split ? "high" : "medium";
        f.confidenceReason = split ? "the gap is measured on each connection and split on the HTTP thread"
                                   : "the gap is measured; too few of the gaps are split to say whose time it is";
      }

      void CompressedAnswers()
      {
        const char* id = "compressed-answers";
        const uint64_t accepting = rest_.answersAcceptingCompression;
        const bool compresses =
          input_.configuration.httpCompressionEnabled && input_.configuration.orthanc.CompressesSmallAnswers();
        if (rest_.stored < kMinimumSamples || accepting < kMinimumSamples || !compresses)
        {
          Check(id, false,
                Format("%.0f HTTP ingest answers to clients accepting gzip/deflate; ", double(accepting)) +
                  (compresses ? "Orthanc compresses them" : "this Orthanc does not compress them"));
          return;
        }
        Check(id, true, Format("%.0f HTTP ingest answers compressed by Orthanc", double(accepting)));
        Finding& f = Add(id, "rest", 0, CostKind::Unobservable, -1);
        f.verdict = Format("Orthanc gzip-compresses each of its %.0f ingest answers (a few hundred bytes): about 17 us "
                           "each, too little to measure inside requestGap; HttpCompressionEnabled false turns it off",
                           double(accepting));
        f.evidence["answersToClientsAcceptingCompression"] = accepting;
        f.evidence["HttpCompressionEnabled"] = true;
        f.evidence["orthancVersion"] = input_.orthancVersion;
        f.evidence["serverTotal"] = PhaseEvidence(rest_[Phase::ServerTotal]);
        f.explanation = "Orthanc before 1.12.2 compresses any answer when the client accepts gzip or deflate; the "
                        "compression happens after every plugin hook, inside requestGap (on Orthanc's CPU, with "
                        "building and sending the answer). zlib takes about 17 us on such an answer "
                        "(docs/measurements/benchmarks.md#compressing-an-ingest-answer).";
        f.fix.configuration.emplace_back("HttpCompressionEnabled", false);
        f.fix.action = "Set HttpCompressionEnabled to false (Orthanc 1.12.2 and later default to it)";
        f.fix.effect = "None measured: uploads took as long with the compression as without, within the "
                       "run-to-run spread (measured with 1 and 4 clients: "
                       "docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after)";
        f.confidence = "low";
        f.confidenceReason = "the compression is certain from Orthanc's rule, but its cost is not observable, and "
                             "switching it off changed nothing measurable";
      }

      // "in the last 5 minutes", "since the reset": the scope of the figures of a finding.
      std::string Scope() const
      {
        return input_.window == "sinceReset" ? "since the reset" : "in " + WindowText(input_.window);
      }

      // Failures that are Orthanc's (the write, the index, the disk, the quota) or, with `unreadable`,
      // those before the instance filters (what Orthanc could not read, or a filter before them refused).
      static uint64_t FailuresOf(const TransportFigures& figures, bool unreadable)
      {
        const uint64_t before = figures.Failures(FailureReason::BeforeFilters);
        return unreadable ? before : figures.Outcomes(Outcome::Failed) - before;
      }

      static uint64_t FailuresOf(const FailingSender& sender, bool unreadable)
      {
        const uint64_t before = sender.reasons[static_cast<size_t>(FailureReason::BeforeFilters)];
        return unreadable ? before : sender.failed - before;
      }

      // The sender with the most of these failures since the reset, in a sentence of its own (the
      // labelled streams keep no window); "" when none is known.
      std::string MostFrom(bool unreadable) const
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
        const bool dicom = most->transport == Transport::Dicom;
        const bool address = !most->remoteIp.empty() && most->remoteIp != "(none)";
        return ". Since the reset, most came from " +
               (dicom ? "calling AET " + most->remoteAet + (address ? " at " + most->remoteIp : "")
                      : (address ? most->remoteIp : std::string("an unknown client")) + " over " +
                          TransportName(most->transport)) +
               ": " + std::to_string(FailuresOf(*most, unreadable));
      }

      // The transport with the most of these failures, or "all" when several have some.
      const char* FailingTransport(bool unreadable, uint64_t failed) const
      {
        size_t worst = 0;
        for (size_t t = 0; t < kTransportCount; t++)
        {
          if (FailuresOf(input_.transports[t], unreadable) > FailuresOf(input_.transports[worst], unreadable))
          {
            worst = t;
          }
        }
        return failed != FailuresOf(input_.transports[worst], unreadable)
                 ? "all"
                 : TransportName(static_cast<Transport>(worst));
      }

      void AddFailureEvidence(Finding& f, bool unreadable) const
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

      // Orthanc failed to store what it was given: the write, the index, the disk or the quota. What it
      // could not read, or what a filter before the instance filters refused, is unreadable-instances'.
      void StoresFailing()
      {
        const char* id = "stores-failing";
        const TransportFigures& all = input_.all;
        const uint64_t failed = FailuresOf(all, false);
        const uint64_t stored = all.stored + all.Outcomes(Outcome::AlreadyStored);
        if (failed == 0)
        {
          Check(id, false,
                Format("no store failed after the instance filters (%.0f stored, %.0f unreadable)", double(stored),
                       double(FailuresOf(all, true))));
          return;
        }
        Check(id, true,
              Format("%.0f stores failed after the instance filters, %.0f stored", double(failed), double(stored)));
        FailureReason main = FailureReason::AfterFilters;
        for (size_t r = 0; r < kFailureReasonCount; r++)
        {
          if (r != static_cast<size_t>(FailureReason::BeforeFilters) &&
              all.failures[r] > all.failures[static_cast<size_t>(main)])
          {
            main = static_cast<FailureReason>(r);
          }
        }
        Finding& f = Add(id, FailingTransport(false, failed), 0, CostKind::Measured, -1);
        f.instancesLost = failed;
        f.shareOfCycle = -1;
        const double share = static_cast<double>(failed) / static_cast<double>(failed + stored);
        // Every failure a C-STORE one ended after the filters, where the site's script registers a C-STORE
        // filter: its refusals look the same as a failed write or index without the timed storage.
        const uint64_t dicomFailed = FailuresOf(input_.transports[static_cast<size_t>(Transport::Dicom)], false);
        const bool maybeRefused = all.failures[static_cast<size_t>(FailureReason::AfterFilters)] == failed &&
                                  dicomFailed == failed && PythonRegisters("IncomingCStoreInstanceFilter");
        if (maybeRefused)
        {
          const TransportFigures& dicom = input_.transports[static_cast<size_t>(Transport::Dicom)];
          const uint64_t dicomStores = failed + dicom.stored + dicom.Outcomes(Outcome::AlreadyStored);
          f.verdict = Format("Refused by the site's C-STORE filter, or lost: %.0f of %.0f C-STORE stores ended after "
                             "the instance filters without being stored ",
                             double(failed), double(dicomStores)) +
                      Scope() +
                      Format(" (%.0f%%); orthanc-python's script registers IncomingCStoreInstanceFilter",
                             100.0 * double(failed) / double(dicomStores)) +
                      MostFrom(false);
        }
        else
        {
          f.verdict = Format("Orthanc is losing instances: %.0f of %.0f stores failed ", double(failed),
                             double(failed + stored)) +
                      Scope() + Format(" (%.1f%%), mostly ", share * 100) + DefinitionOf(main).name + MostFrom(false);
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
        f.explanation = std::string("Each failed store is an instance the sender believes sent or must send again: ") +
                        DefinitionOf(main).meaning +
                        ". The plugin concludes a store failed when the thread that ran "
                        "it has left Orthanc's store without reaching OnStored (docs/outcomes.md).";
        switch (main)
        {
          case FailureReason::DiskFull:
            f.fix.action = "Free space on the storage's file system, or move StorageDirectory to a larger one; "
                           "Orthanc refuses every instance until there is room";
            break;
          case FailureReason::Quota:
            f.fix.action = "Raise MaximumStorageSize or MaximumPatientCount, or unprotect patients so that "
                           "Orthanc can recycle the oldest";
            f.fix.configuration.emplace_back("MaximumStorageSize", "larger, or 0 for no limit");
            break;
          case FailureReason::StorageWrite:
            f.fix.action = "The storage area refuses writes: check its file system (space, permissions, errors "
                           "in the kernel's log)";
            break;
          case FailureReason::Index:
            f.fix.action = "The index refuses the instances after they were written: check the database (its log, "
                           "disk, connections) and Orthanc's limits";
            break;
          default:
            f.fix.action = "Look at Orthanc's log for \"Store failure\" and storage errors; set "
                           "IngestPerf.TimedStorage to tell a failed write, a failed index and a filter apart";
            break;
        }
        if (maybeRefused)
        {
          f.fix.configuration.emplace_back("IngestPerf.TimedStorage", true);
          f.fix.action = "If the site's C-STORE filter refuses these instances on purpose, nothing is lost: turn on "
                         "IngestPerf.TimedStorage to count them as rejected; otherwise look at Orthanc's log for "
                         "\"Store failure\" and storage errors";
        }
        f.fix.effect = "every instance stored instead of lost: " + std::to_string(failed) + " " + Scope();
        f.confidence = main == FailureReason::AfterFilters ? "medium" : "high";
        f.confidenceReason = main == FailureReason::AfterFilters
                               ? "the failures are counted exactly; which step failed needs TimedStorage"
                               : "the failures are counted exactly, and their reason observed";
      }

      // What Orthanc could not read or identify (a damaged or cut file, a missing UID), or what a Lua
      // script or the filter of a plugin loaded before this one refused: the sender's side, or the
      // site's rule, not Orthanc losing what it was given. Ranked with the instances lost only when
      // they are a share worth a sender's attention (kUnreadableShare); below, listed last.
      void UnreadableInstances()
      {
        const char* id = "unreadable-instances";
        const TransportFigures& all = input_.all;
        const uint64_t unreadable = FailuresOf(all, true);
        uint64_t received = 0;
        for (uint64_t n : all.outcomes)
        {
          received += n;
        }
        const double share = received > 0 ? double(unreadable) / double(received) : 0;
        if (unreadable == 0)
        {
          Check(id, false, Format("no instance failed before the instance filters (%.0f received)", double(received)));
          return;
        }
        Check(id, true,
              Format("%.0f of %.0f instances failed before the instance filters (%.1f%%)", double(unreadable),
                     double(received), share * 100));
        Finding& f = Add(id, FailingTransport(true, unreadable), 0, CostKind::Measured, -1);
        f.shareOfCycle = -1;
        f.instancesLost = share >= kUnreadableShare ? unreadable : 0;
        bool filtersBefore = PythonRegisters("IncomingDicomInstanceFilter") ||
                             PythonRegisters("ReceivedInstanceCallback") || !input_.pluginsBefore.empty();
        for (const std::string& callback : input_.configuration.luaCallbacks)
        {
          filtersBefore = filtersBefore || callback.find("Filter") != std::string::npos;
        }
        f.verdict = std::string(filtersBefore ? "Orthanc could not read, or the site's filters refused, instances "
                                                "clients sent: "
                                              : "Clients sent instances Orthanc could not read: ") +
                    Format("%.0f of %.0f instances received ", double(unreadable), double(received)) + Scope() +
                    Format(" (%.1f%%)", share * 100) + (share >= kUnreadableShare ? "" : ", rare") + MostFrom(true);
        f.evidence["failedBeforeFilters"] = unreadable;
        f.evidence["received"] = received;
        f.evidence["rankedWithLostInstancesFromShare"] = kUnreadableShare;
        AddFailureEvidence(f, true);
        f.explanation = std::string("These instances ") + DefinitionOf(FailureReason::BeforeFilters).meaning +
                        ". Orthanc answered the sender with an error (HTTP 400, a C-STORE failure status): "
                        "nothing was written, and the sender knows.";
        f.fix.action = "Look at Orthanc's log for the refused instances (\"Exception while storing DICOM\", missing "
                       "tags) and at the sender named: a cut upload, a damaged file or missing identifiers are the "
                       "sender's to fix; a refusal by the site's Lua script or filter is by design";
        f.fix.effect = "each instance sent whole and with its identifiers is stored";
        f.confidence = filtersBefore ? "medium" : "high";
        f.confidenceReason = filtersBefore ? "counted exactly; a refusal by a filter before the instance filters is "
                                             "not told apart from an unreadable file"
                                           : "counted exactly, and no filter runs before the instance filters";
      }

      void RejectedOrDuplicate()
      {
        const char* id = "rejected-or-duplicate";
        const TransportFigures& all = input_.all;
        const uint64_t duplicates = all.Outcomes(Outcome::AlreadyStored);
        // Failed stores are stores-failing's: these are the instances Orthanc was not meant to keep.
        const uint64_t rejected = all.Outcomes(Outcome::NotDicom) + all.Outcomes(Outcome::Rejected);
        uint64_t total = 0;
        for (uint64_t n : all.outcomes)
        {
          total += n;
        }
        const double share = total > 0 ? static_cast<double>(duplicates + rejected) / double(total) : 0;
        if (duplicates + rejected < kRejectedMinimum || share < kRejectedShare)
        {
          Check(
            id, false,
            Format("%.0f already stored, %.0f rejected of %.0f", double(duplicates), double(rejected), double(total)));
          return;
        }
        Check(
          id, true,
          Format("%.0f already stored, %.0f rejected of %.0f", double(duplicates), double(rejected), double(total)));
        const PhaseFigures& server = all[Phase::ServerTotal];
        // A duplicate costs a whole store; a rejected instance at most its parsing, not counted.
        const double cost =
          all.stored > 0 ? server.meanMs * static_cast<double>(duplicates) / static_cast<double>(all.stored) : 0;
        Finding& f = Add(id, "all", cost, CostKind::Estimated, AllCycleMs());
        f.verdict = Format("%.0f%% of the instances received were not stored: %.0f already stored (sent again), "
                           "%.0f rejected",
                           share * 100, double(duplicates), double(rejected));
        for (size_t o = 0; o < kOutcomeCount; o++)
        {
          f.evidence["outcomes"][DefinitionOf(static_cast<Outcome>(o)).name] = all.outcomes[o];
        }
        f.evidence["OverwriteInstances"] = input_.configuration.overwriteInstances;
        f.evidence["serverTotal"] = PhaseEvidence(server);
        f.explanation = "A duplicate goes through the whole store before Orthanc finds it in its index; the cost "
                        "is estimated as serverTotal's mean per duplicate, spread over the stored instances.";
        f.fix.action = "Duplicates: a sender re-sending (retries after timeouts, a router sending twice): look at "
                       "its queue and logs. Rejected: a client posting non-DICOM files, or filters discarding "
                       "on purpose";
        f.fix.effect = "each duplicate not sent saves a whole store";
        f.confidence = "high";
        f.confidenceReason = "the outcomes are counted exactly";
      }
    };
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
    return Rules(input).Run();
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
