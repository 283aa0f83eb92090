// The predicates of the HTTP rules: Orthanc's HTTP threads, the Lua lock and the uploads in receive,
// the time between two requests of a connection, and the compressed answers
// (docs/diagnosis.md#http-threads-saturated, #lua-lock and the rules after it).
#include "Diagnosis/FindingFigures.h"
#include "Diagnosis/RuleEvaluation.h"

#include <algorithm>
#include <cmath>

namespace IngestPerf
{
  using namespace FindingFigures;

  void RuleEvaluation::HttpThreadsSaturated()
  {
    static const RuleEntry& rule = RuleEntryOf("http-threads-saturated");
    const PhaseFigures& server = rest_[Phase::ServerTotal];
    if (rest_.stored < kMinimumSamples)
    {
      Check(rule, false, Format(rule.Text("notJudged"), double(rest_.stored)));
      return;
    }
    const double threads = input_.configuration.httpThreadsCount;
    const double busy = input_.activeSeconds > 0 ? server.sumMs / 1000 / input_.activeSeconds : 0;
    // Now, or in the samples of the span: a reader's own request waits for a thread when they are all
    // held, and may find the queue drained once served.
    const double now = static_cast<double>(std::max<int64_t>(0, input_.httpConnectionsNow));
    const double connections = std::max(now, static_cast<double>(input_.connections.httpMax));
    const bool queued = connections > threads;
    // A connection beyond HttpThreadsCount waits for a thread: CivetWeb serves one connection per thread,
    // keep-alive requests included, and queues the others. Without a queue to see now, only threads
    // that were nearly always busy storing say the same.
    if (!queued && busy < rule.Threshold("busyShareOfThreads") * threads)
    {
      Check(rule, false, Format(rule.Text("notFired"), busy, connections, now, threads));
      return;
    }
    Check(rule, true, Format(rule.Text("fired"), busy, connections, now, threads));
    const double waiting = queued ? connections / threads - 1 : 0;
    Finding& f = Add(rule, "rest", waiting * server.meanMs, CostKind::Estimated, server.meanMs * (1 + waiting));
    f.verdict = Format(rule.Text("verdict"), threads, connections);
    f.evidence["httpThreadsBusyOnAverage"] = Round(busy, 0.01);
    f.evidence["HttpThreadsCount"] = input_.configuration.httpThreadsCount;
    f.evidence["httpConnectionsOpenNow"] = input_.httpConnectionsNow;
    f.evidence["httpConnectionsOpenAtMost"] = input_.connections.httpMax;
    f.evidence["connectionSamples"] = input_.connections.samples;
    f.evidence["samplesWithMoreConnectionsThanThreads"] = input_.connections.httpOverThreads;
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.explanation = rule.Text("explanation");
    f.fix.configuration.emplace_back("HttpThreadsCount",
                                     static_cast<unsigned int>(std::max(threads * 2, std::ceil(connections) + 1)));
    f.fix.action = rule.Text("action");
    f.fix.effect = rule.MeasuredEffect(rule.Text("effect"));
    f.confidence = queued ? "high" : "medium";
    f.confidenceReason = rule.Text(queued ? "confidenceHigh" : "confidenceMedium");
  }


  // The HTTP receive blocked while Lua's callbacks hold Orthanc's Lua lock: Orthanc takes that lock in
  // every HTTP request's filter, before the body is read, and holds it while Lua's OnStoredInstance,
  // OnChange and stable-resource callbacks run on Lua's thread.
  bool RuleEvaluation::LuaLock()
  {
    static const RuleEntry& rule = RuleEntryOf("lua-lock");
    const PhaseFigures& receive = rest_[Phase::Receive];
    const PhaseFigures& server = rest_[Phase::ServerTotal];
    const std::vector<std::string>& callbacks = input_.configuration.luaCallbacks;
    if (callbacks.empty())
    {
      Check(rule, false, rule.Text("notJudged"));
      return false;
    }
    if (receive.count < kMinimumSamples || receive.meanMs < rule.Threshold("receiveMs") ||
        receive.meanMs < rule.Threshold("receiveShareOfServerTotal") * server.meanMs)
    {
      Check(rule, false, Format(rule.Text("notFired"), receive.meanMs, server.meanMs, double(receive.count)));
      return false;
    }
    if (PartsKnown(receive) && DominantPart(receive.parts) != Dominant::Blocked)
    {
      Check(rule, false, Say(rule.Text("notFiredNotWaiting"), {receive.meanMs, PartsText(receive)}));
      return false;
    }
    Check(rule, true, Format(rule.Text("fired"), receive.meanMs, server.meanMs));
    Finding& f = Add(rule, "rest", receive.meanMs, CostKind::Measured, CycleMs(rest_));
    f.verdict = Say(rule.Text("verdict"), {receive.meanMs, Names(callbacks)}) +
                (PartsKnown(receive) ? Format(rule.Text("verdictBlocked"), 100 * receive.parts.BlockedShare()) : "");
    f.evidence["receive"] = PhaseEvidence(receive);
    if (PartsKnown(receive))
    {
      f.evidence["receiveParts"] = PartsEvidence(receive);
    }
    f.evidence["luaCallbacks"] = NameList(callbacks);
    f.evidence["LuaScripts"] = input_.configuration.luaScripts;
    f.explanation = rule.Text("explanation");
    f.fix.action = Say(rule.Text("action"), {Names(callbacks)});
    f.fix.effect = rule.MeasuredEffect(rule.Text("effect"));
    f.confidence = "medium";
    f.confidenceReason = rule.Text("confidence");
    return true;
  }


  void RuleEvaluation::SlowUploads(bool explained)
  {
    static const RuleEntry& rule = RuleEntryOf("slow-uploads");
    if (explained)
    {
      Check(rule, false, rule.Text("explainedByLuaLock"));
      return;
    }
    const PhaseFigures& receive = rest_[Phase::Receive];
    const PhaseFigures& server = rest_[Phase::ServerTotal];
    if (receive.count < kMinimumSamples)
    {
      Check(rule, false, Format(rule.Text("notJudged"), double(receive.count)));
      return;
    }
    const bool fired = receive.meanMs >= rule.Threshold("receiveMs") &&
                       receive.meanMs >= rule.Threshold("receiveShareOfServerTotal") * server.meanMs;
    Check(rule, fired, Format(rule.Text("seen"), receive.meanMs, server.meanMs));
    if (!fired)
    {
      return;
    }
    Finding& f = Add(rule, "rest", receive.meanMs, CostKind::Measured, CycleMs(rest_));
    const double megabytesPerSecond =
      receive.sumMs > 0 ? static_cast<double>(rest_.receivedBytes) / 1e6 / (receive.sumMs / 1000) : 0;
    f.verdict = Format(rule.Text("verdict"), receive.meanMs, megabytesPerSecond, server.meanMs - receive.meanMs);
    f.evidence["receive"] = PhaseEvidence(receive);
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.evidence["uploadMegabytesPerSecond"] = Round(megabytesPerSecond, 0.01);
    Describe(f, rule, "high", "confidence");
  }


  // The sibling of a slow C-STORE sender over HTTP: between the end of a request's store and the next
  // request of its keep-alive connection, Orthanc builds, compresses and sends the answer (on its CPU),
  // then the thread waits for the client (blocked). The split tells whose time it is.
  void RuleEvaluation::SlowHttpClient()
  {
    static const RuleEntry& rule = RuleEntryOf("slow-http-client");
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
      Check(rule, false, Format(rule.Text("notJudged"), double(gap.count), double(kMinimumSamples)));
      return;
    }
    const double cycle = CycleMs(*http);
    const double share = cycle > 0 ? gap.meanMs / cycle : 0;
    const std::string seen = Say(rule.Text("seen"), {MeanAndTail(gap), 100 * share, cycle});
    const double gapMs = rule.Threshold("gapMeanMs");
    const double shareOfCycle = rule.Threshold("shareOfCycle");
    if (gap.meanMs < gapMs || share < shareOfCycle)
    {
      Check(rule, false, seen);
      return;
    }
    const bool split = PartsKnown(gap);
    const bool orthancsAnswer = split && gap.parts.OnCpuShare() >= rule.Threshold("answerOnCpuShare");
    // Split, the client's time is the blocked part: a gap made long by Orthanc's thread waiting for a
    // CPU (sending the answer late) is waiting-for-cpu's, not the client's.
    const double clientMs = split ? gap.meanMs * gap.parts.BlockedShare() : gap.meanMs;
    if (split && !orthancsAnswer && (clientMs < gapMs || clientMs < shareOfCycle * cycle))
    {
      Check(rule, false, Say(rule.Text("notFiredClient"), {seen, PartsText(gap), clientMs}));
      return;
    }
    Check(rule, true, seen + (split ? ", " + PartsText(gap) : ""));
    Finding& f = Add(rule, transport, gap.meanMs, CostKind::Measured, cycle);
    f.verdict = orthancsAnswer ? Format(rule.Text("verdictAnswer"), gap.meanMs, cycle, 100 * gap.parts.OnCpuShare())
                               : Format(rule.Text("verdictClient"), gap.meanMs, cycle, 100 * share);
    f.evidence["requestGap"] = PhaseEvidence(gap);
    if (split)
    {
      f.evidence["requestGapParts"] = PartsEvidence(gap);
    }
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.evidence["answersAcceptingCompression"] = http->answersAcceptingCompression;
    f.evidence["HttpCompressionEnabled"] = input_.configuration.httpCompressionEnabled;
    f.explanation = rule.Text("explanation");
    f.explanation += split ? Say(rule.Text("explanationSplit"), {PartsText(gap), gap.parts.onCpuMs})
                           : Format(rule.Text("explanationUnsplit"), double(gap.parts.sampled), double(gap.count),
                                    double(kMinimumSplit));
    if (orthancsAnswer)
    {
      f.fix.configuration.emplace_back("HttpCompressionEnabled", false);
      f.fix.action = rule.Text("actionAnswer");
      f.fix.effect = Format(rule.Text("effectAnswer"), gap.parts.onCpuMs);
    }
    else
    {
      f.fix.action = rule.Text("actionClient");
      f.fix.effect =
        Format(rule.Text("effectClient"), split ? gap.parts.blockedMs + gap.parts.waitingForCpuMs : gap.meanMs);
    }
    f.confidence = split ? "high" : "medium";
    f.confidenceReason = rule.Text(split ? "confidenceHigh" : "confidenceMedium");
  }


  void RuleEvaluation::CompressedAnswers()
  {
    static const RuleEntry& rule = RuleEntryOf("compressed-answers");
    const uint64_t accepting = rest_.answersAcceptingCompression;
    const bool compresses =
      input_.configuration.httpCompressionEnabled && input_.configuration.orthanc.CompressesSmallAnswers();
    if (rest_.stored < kMinimumSamples || accepting < kMinimumSamples || !compresses)
    {
      Check(rule, false, Format(rule.Text(compresses ? "notFiredCompresses" : "notFired"), double(accepting)));
      return;
    }
    Check(rule, true, Format(rule.Text("fired"), double(accepting)));
    Finding& f = Add(rule, "rest", 0, CostKind::Unobservable, -1);
    f.verdict = Format(rule.Text("verdict"), double(accepting));
    f.evidence["answersToClientsAcceptingCompression"] = accepting;
    f.evidence["HttpCompressionEnabled"] = true;
    f.evidence["orthancVersion"] = input_.orthancVersion;
    f.evidence["serverTotal"] = PhaseEvidence(rest_[Phase::ServerTotal]);
    f.fix.configuration.emplace_back("HttpCompressionEnabled", false);
    Describe(f, rule, "low", "confidence");
  }
}
