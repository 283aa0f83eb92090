// The predicates of the rules on Orthanc's store itself: a CPU to run on, the transcoding, the site's
// code inside the store (other plugins' callbacks and filters, C-STORE filters), the storage, the
// index and the change thread (docs/diagnosis.md#waiting-for-cpu and the rules after it).
#include "Diagnosis/FindingFigures.h"
#include "Diagnosis/RuleEvaluation.h"

namespace IngestPerf
{
  using namespace FindingFigures;

  bool RuleEvaluation::EnoughInstances(const RuleEntry& rule)
  {
    if (input_.all.stored < kMinimumSamples)
    {
      Check(rule, false, Format(rule.Text("notEnoughInstances"), double(input_.all.stored)));
      return false;
    }
    return true;
  }


  // Orthanc's threads ready to run but without a CPU: other processes or threads on its cores, or a
  // CPU quota (a VM's steal time shows the same). The storing thread's run delay, over the split instances.
  void RuleEvaluation::WaitingForCpu()
  {
    static const RuleEntry& rule = RuleEntryOf("waiting-for-cpu");
    const PhaseFigures& server = input_.all[Phase::ServerTotal];
    const PartFigures& parts = server.parts;
    if (parts.sampled < kMinimumSplit || parts.runDelaySampled < kMinimumSplit)
    {
      Check(
        rule, false,
        Format(rule.Text("notJudged"), double(parts.sampled), double(parts.runDelaySampled), double(kMinimumSplit)));
      return;
    }
    const double waiting = 100 * parts.WaitingShare();
    if (parts.waitingForCpuMs < rule.Threshold("waitingMs") ||
        parts.WaitingShare() < rule.Threshold("shareOfServerTotal"))
    {
      Check(rule, false,
            Format(rule.Text("notFired"), parts.waitingForCpuMs, parts.meanMs, waiting, double(parts.sampled)));
      return;
    }
    Check(rule, true, Format(rule.Text("fired"), parts.waitingForCpuMs, parts.meanMs, waiting, double(parts.sampled)));
    // The share measured on the split instances, applied to every instance's store.
    const double cost = parts.WaitingShare() * server.meanMs;
    Finding& f = Add(rule, "all", cost, CostKind::Measured, AllCycleMs());
    f.verdict = Format(rule.Text("verdict"), cost, server.meanMs, waiting);
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.evidence["serverTotalParts"] = PartsEvidence(server);
    for (const Phase phase : {Phase::PreStore, Phase::Persist})
    {
      if (PartsKnown(input_.all[phase]))
      {
        f.evidence[std::string(DefinitionOf(phase).name) + "Parts"] = PartsEvidence(input_.all[phase]);
      }
    }
    f.explanation = Say(rule.Text("explanation"), {PartsText(server)});
    f.fix.action = rule.Text("action");
    f.fix.effect = Format(rule.Text("effect"), waiting);
    f.confidence = double(parts.sampled) >= rule.Threshold("highConfidenceSplitInstances") ? "high" : "medium";
    f.confidenceReason = Format(rule.Text("confidence"), double(parts.sampled));
  }


  bool RuleEvaluation::TranscodingBound()
  {
    static const RuleEntry& rule = RuleEntryOf("transcoding-bound");
    const TransportFigures& all = input_.all;
    const PhaseFigures& transcode = all[Phase::Transcode];
    const PhaseFigures& preStore = all[Phase::PreStore];
    const PhaseFigures& server = all[Phase::ServerTotal];
    if (!EnoughInstances(rule))
    {
      return false;
    }
    const bool measured = transcode.count >= kMinimumSamples;
    const bool inferred = !measured && input_.configuration.ingestTranscoding && !input_.transcoderHook;
    const double cost = measured ? transcode.meanMs : preStore.meanMs;
    if (!(measured || inferred) || cost < rule.Threshold(measured ? "transcodeMs" : "preStoreMs") ||
        cost < rule.Threshold("shareOfServerTotal") * server.meanMs)
    {
      Check(rule, false,
            measured   ? Format(rule.Text("notFiredTimed"), transcode.meanMs, server.meanMs)
            : inferred ? Format(rule.Text("notFiredInferred"), preStore.meanMs, server.meanMs)
                       : rule.Text("notFiredNone"));
      return false;
    }
    Check(rule, true, Format(rule.Text(measured ? "firedTimed" : "firedInferred"), cost, server.meanMs));
    Finding& f = Add(rule, "all", cost, CostKind::Measured, AllCycleMs());
    const std::string target = input_.configuration.ingestTranscodingSyntax;
    const PhaseFigures& timed = measured ? transcode : preStore;
    f.verdict = Format(rule.Text("verdict"), cost, server.meanMs) +
                (target.empty() ? "" : Say(rule.Text("verdictSyntax"), {target})) + HeldBy(timed, "");
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
    f.explanation = rule.Text(measured ? "explanationTimed" : "explanationInferred");
    if (all.transcodedWithoutHook > 0)
    {
      f.explanation += rule.Text("explanationEarlierPlugin");
    }
    f.fix.action = rule.Text("action");
    f.fix.effect = rule.MeasuredEffect(rule.Text("effect"));
    f.confidence = measured ? "high" : "medium";
    f.confidenceReason = rule.Text(measured ? "confidenceHigh" : "confidenceMedium");
    return true;
  }


  // The site's own plugins: their instance filters and OnStoredInstance callbacks, timed between this
  // plugin's two callbacks of each chain (the plugins loaded after it), and the time between the index
  // commit and this plugin's OnStored (the plugins loaded before it, or the OnStored lock). Orthanc runs
  // every plugin's OnStoredInstance under one lock: a slow one holds every store.
  bool RuleEvaluation::SiteCallbacks()
  {
    static const RuleEntry& rule = RuleEntryOf("site-callbacks");
    const TransportFigures& all = input_.all;
    const PhaseFigures& server = all[Phase::ServerTotal];
    if (!EnoughInstances(rule))
    {
      return false;
    }
    const PhaseFigures& filters = all[Phase::OtherFilters];
    const PhaseFigures& stored = all[Phase::OtherOnStored];
    const PhaseFigures& wait = all[Phase::OnStoredWait];
    const double later = filters.meanMs + stored.meanMs;
    const double earlier = OnStoredWaitPerInstanceMs(all);
    const double cost = later + earlier;
    const std::string seen = Format(rule.Text("seen"), filters.meanMs, stored.meanMs, earlier, server.meanMs);
    if (cost < rule.Threshold("callbacksMs") || cost < rule.Threshold("shareOfServerTotal") * server.meanMs)
    {
      Check(rule, false, seen);
      return false;
    }
    Check(rule, true, seen);
    Finding& f = Add(rule, "all", cost, CostKind::Measured, AllCycleMs());
    std::string where;
    if (stored.meanMs >= filters.meanMs && stored.meanMs >= earlier)
    {
      where = Say(rule.Text("whereOnStored"), {stored.meanMs, Names(input_.pluginsAfter)});
    }
    else if (filters.meanMs >= earlier)
    {
      where = Say(rule.Text("whereFilters"), {filters.meanMs, Names(input_.pluginsAfter)});
    }
    else
    {
      where = input_.pluginsBefore.empty()
                ? Say(rule.Text("whereLock"), {wait.meanMs})
                : Say(rule.Text("wherePluginsBefore"), {wait.meanMs, Names(input_.pluginsBefore)});
    }
    f.verdict = Say(rule.Text("verdict"), {cost, server.meanMs, where}) + PythonText("OnStoredInstance");
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
    const bool between = later >= earlier;
    Describe(f, rule,
             between                        ? "high"
             : input_.pluginsBefore.empty() ? "low"
                                            : "medium",
             between ? "confidenceBetween" : "confidenceWait");
    return true;
  }


  // Persist longer for C-STORE than for HTTP, on one storage and one index: what persist holds for
  // C-STORE alone is the C-STORE filters (IncomingCStoreInstanceFilter), which Orthanc calls after every
  // instance filter and around which this plugin has no hook (it registers no C-STORE filter).
  bool RuleEvaluation::CStoreFilters()
  {
    static const RuleEntry& rule = RuleEntryOf("cstore-filters");
    const PhaseFigures& dicom = dicom_[Phase::Persist];
    const PhaseFigures& rest = rest_[Phase::Persist];
    const PhaseFigures& server = dicom_[Phase::ServerTotal];
    if (dicom.count < kMinimumSamples || rest.count < kMinimumSamples)
    {
      Check(rule, false,
            Format(rule.Text("notJudged"), double(dicom.count), double(rest.count), double(kMinimumSamples)));
      return false;
    }
    const double extra = dicom.p50Ms - rest.p50Ms;
    const std::string seen = Format(rule.Text("seen"), dicom.p50Ms, rest.p50Ms, server.p50Ms);
    if (extra < rule.Threshold("extraPersistMs") || extra < rule.Threshold("shareOfServerTotal") * server.p50Ms)
    {
      Check(rule, false, seen);
      return false;
    }
    Check(rule, true, seen);
    Finding& f = Add(rule, "dicom", extra, CostKind::Measured, CycleMs(dicom_));
    const std::vector<std::string> plugins = AllOtherPlugins();
    const bool python = PythonRegisters("IncomingCStoreInstanceFilter");
    f.verdict = Format(rule.Text("verdict"), extra, dicom.p50Ms, rest.p50Ms) +
                (plugins.empty() ? std::string() : Say(rule.Text("verdictPlugins"), {Names(plugins)})) +
                PythonText("IncomingCStoreInstanceFilter");
    f.evidence["dicomPersist"] = PhaseEvidence(dicom);
    f.evidence["restPersist"] = PhaseEvidence(rest);
    f.evidence["otherPlugins"] = NameList(plugins);
    f.evidence["pythonCallbacks"] = NameList(input_.configuration.pythonCallbacks);
    Describe(f, rule, python ? "high" : plugins.empty() ? "low" : "medium", "confidence");
    f.confidenceReason += python ? rule.Text("confidencePython") : "";
    return true;
  }


  void RuleEvaluation::IndexBound()
  {
    static const RuleEntry& rule = RuleEntryOf("index-bound");
    const TransportFigures& all = input_.all;
    const PhaseFigures& index = all[Phase::IndexUpdate];
    const PhaseFigures& server = all[Phase::ServerTotal];
    if (!input_.timedStorageActive)
    {
      Check(rule, false, rule.Text("notJudged"));
      return;
    }
    // The part after the index commit is the site-callbacks rule's.
    const double transaction = index.meanMs - OnStoredWaitPerInstanceMs(all);
    if (index.count < kMinimumSamples || transaction < rule.Threshold("indexMs") ||
        transaction < rule.Threshold("shareOfServerTotal") * server.meanMs)
    {
      Check(
        rule, false,
        Format(rule.Text("notFired"), index.meanMs, index.meanMs - transaction, server.meanMs, double(index.count)));
      return;
    }
    if (PartsKnown(index) && DominantPart(index.parts) == Dominant::Waiting)
    {
      Check(rule, false, Say(rule.Text("notFiredWaiting"), {index.meanMs, server.meanMs, PartsText(index)}));
      return;
    }
    Check(rule, true, Format(rule.Text("fired"), index.meanMs, server.meanMs));
    Finding& f = Add(rule, "all", index.meanMs, CostKind::Measured, AllCycleMs());
    const bool sqlite = input_.configuration.indexPluginSection.empty();
    const std::string backend = sqlite ? "SQLite" : input_.configuration.indexPluginSection;
    f.verdict = Say(rule.Text("verdict"), {index.meanMs, server.meanMs, backend}) +
                HeldBy(index, rule.Text(sqlite ? "blockedBySqlite" : "blockedByDatabase"));
    f.evidence["index"] = backend;
    f.evidence["indexUpdate"] = PhaseEvidence(index);
    if (PartsKnown(index))
    {
      f.evidence["indexUpdateParts"] = PartsEvidence(index);
    }
    f.evidence["serverTotal"] = PhaseEvidence(server);
    Describe(f, rule, "high", "confidence");
    if (!sqlite)
    {
      f.fix.action = rule.Text("actionDatabase");
    }
  }


  void RuleEvaluation::SlowChangeConsumer()
  {
    static const RuleEntry& rule = RuleEntryOf("slow-change-consumer");
    const PhaseFigures& perInstance = input_.changePerInstanceWhileBacklogged;
    const PhaseFigures& dispatch = input_.all[Phase::ChangeDispatch];
    // A backlog now is the sign during an incident (right after a burst, the change thread has timed
    // one or two changes); once drained, the lag of the changes says the same.
    const bool backlogged = double(input_.changeBacklog) >= rule.Threshold("backlog") ||
                            (dispatch.count >= kMinimumSamples / 2 && dispatch.p50Ms >= rule.Threshold("lagP50Ms"));
    // Right after a burst the change thread may not have timed a change while others waited: the lag
    // of those it delivered stands for it then.
    const bool timed = perInstance.count > 0;
    const double perChangeMs = timed ? perInstance.meanMs : dispatch.p50Ms;
    if (!backlogged || perChangeMs < rule.Threshold("perInstanceMs"))
    {
      Check(rule, false,
            Format(rule.Text("notFired"), double(input_.changeBacklog), dispatch.p50Ms, perInstance.meanMs));
      return;
    }
    Check(rule, true, Format(rule.Text("fired"), double(input_.changeBacklog), perChangeMs));
    Finding& f = Add(rule, "all", perChangeMs, timed ? CostKind::Measured : CostKind::Estimated, -1);
    f.verdict = Format(rule.Text("verdict"), perChangeMs, double(input_.changeBacklog));
    f.evidence["newInstanceBacklog"] = input_.changeBacklog;
    f.evidence["perInstanceWhileBacklogged"] = PhaseEvidence(perInstance);
    f.evidence["changeDispatch"] = PhaseEvidence(dispatch);
    f.evidence["LuaScripts"] = input_.configuration.luaScripts;
    Describe(f, rule, timed ? "high" : "medium", timed ? "confidenceHigh" : "confidenceMedium");
  }


  void RuleEvaluation::SlowFilters(bool transcoding)
  {
    static const RuleEntry& rule = RuleEntryOf("slow-filters");
    const TransportFigures& all = input_.all;
    const PhaseFigures& preStore = all[Phase::PreStore];
    const PhaseFigures& transcode = all[Phase::Transcode];
    const PhaseFigures& server = all[Phase::ServerTotal];
    if (!EnoughInstances(rule))
    {
      return;
    }
    if (transcoding && transcode.count < kMinimumSamples)
    {
      Check(rule, false, rule.Text("explainedByTranscoding"));
      return;
    }
    const double cost = preStore.meanMs - transcode.meanMs;
    const bool fired =
      cost >= rule.Threshold("preStoreMs") && cost >= rule.Threshold("shareOfServerTotal") * server.meanMs;
    Check(rule, fired, Format(rule.Text("seen"), cost, server.meanMs));
    if (!fired)
    {
      return;
    }
    Finding& f = Add(rule, "all", cost, CostKind::Measured, AllCycleMs());
    f.verdict = Format(rule.Text("verdict"), cost, server.meanMs);
    f.evidence["preStore"] = PhaseEvidence(preStore);
    f.evidence["transcode"] = transcode.count > 0 ? PhaseEvidence(transcode) : Evidence();
    f.evidence["serverTotal"] = PhaseEvidence(server);
    f.evidence["LuaScripts"] = input_.configuration.luaScripts;
    f.evidence["IngestTranscoding"] =
      input_.configuration.ingestTranscoding ? Evidence(input_.configuration.ingestTranscodingSyntax) : Evidence();
    const bool lua = input_.configuration.luaScripts > 0;
    Describe(f, rule, lua ? "high" : "medium", lua ? "confidenceHigh" : "confidenceMedium");
  }


  void RuleEvaluation::StorageBound(bool cstoreFilters)
  {
    static const RuleEntry& rule = RuleEntryOf("storage-bound");
    const TransportFigures& all = input_.all;
    const PhaseFigures& server = all[Phase::ServerTotal];
    if (!EnoughInstances(rule))
    {
      return;
    }
    if (input_.timedStorageActive)
    {
      const PhaseFigures& prepare = all[Phase::StoragePrepare];
      const PhaseFigures& write = all[Phase::StorageWrite];
      const double cost = prepare.meanMs + write.meanMs;
      if (cost < rule.Threshold("storageMs") || cost < rule.Threshold("shareOfServerTotal") * server.meanMs)
      {
        Check(rule, false, Format(rule.Text("seenTimed"), prepare.meanMs, write.meanMs, server.meanMs));
        return;
      }
      const PhaseFigures& larger = prepare.meanMs > write.meanMs ? prepare : write;
      if (PartsKnown(larger) && DominantPart(larger.parts) == Dominant::Waiting)
      {
        Check(rule, false, Format(rule.Text("notFiredTimedWaiting"), prepare.meanMs, write.meanMs));
        return;
      }
      Check(rule, true, Format(rule.Text("seenTimed"), prepare.meanMs, write.meanMs, server.meanMs));
      Finding& f = Add(rule, "all", cost, CostKind::Measured, AllCycleMs());
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
        f.verdict = Format(rule.Text("verdictCompression"), prepare.meanMs, server.meanMs) + HeldBy(prepare, "");
        f.explanation = rule.Text("explanationCompression");
        f.fix.configuration.emplace_back("StorageCompression", false);
        f.fix.action = rule.Text("actionCompression");
        f.fix.effect = rule.MeasuredEffect(rule.Text("effectCompression"));
      }
      else
      {
        f.verdict =
          Format(rule.Text("verdictWrite"), write.meanMs, server.meanMs, input_.storageCreateMegabytesPerSecond) +
          HeldBy(write, rule.Text("theDisk"));
        f.explanation = rule.Text("explanationWrite");
        f.fix.action =
          rule.Text("actionWrite") + std::string(input_.configuration.syncStorageArea ? rule.Text("actionSync") : "");
        f.fix.effect = rule.Text("effectWrite");
      }
      f.confidence = "high";
      f.confidenceReason = rule.Text("confidenceTimed");
      return;
    }
    const PhaseFigures& persist = all[Phase::Persist];
    const double untimedMs = rule.Threshold("persistUntimedMs");
    if (cstoreFilters && rest_[Phase::Persist].meanMs < untimedMs)
    {
      Check(rule, false, Format(rule.Text("explainedByCStoreFilters"), rest_[Phase::Persist].meanMs));
      return;
    }
    // The part of persist after the index commit is the site-callbacks rule's.
    const double onStoredWait = OnStoredWaitPerInstanceMs(all);
    if (persist.meanMs - onStoredWait < untimedMs ||
        persist.meanMs - onStoredWait < rule.Threshold("shareOfServerTotal") * server.meanMs)
    {
      Check(rule, false, Format(rule.Text("notFired"), persist.meanMs, onStoredWait, server.meanMs, untimedMs));
      return;
    }
    const bool split = PartsKnown(persist);
    const Dominant dominant = split ? DominantPart(persist.parts) : Dominant::Blocked;
    if (split && dominant == Dominant::Waiting)
    {
      Check(rule, false, Say(rule.Text("notFiredWaiting"), {persist.meanMs, server.meanMs, PartsText(persist)}));
      return;
    }
    Check(rule, true,
          Format(rule.Text("fired"), persist.meanMs, server.meanMs) + (split ? ", " + PartsText(persist) : ""));
    Finding& f = Add(rule, "all", persist.meanMs, CostKind::Measured, AllCycleMs());
    const std::string index =
      input_.configuration.indexPluginSection.empty() ? std::string("SQLite") : input_.configuration.indexPluginSection;
    const std::string& storagePlugin = input_.storageOwner;
    const std::string storage = storagePlugin.empty() ? rule.Text("theDisk") : storagePlugin;
    if (!split)
    {
      f.verdict = Format(rule.Text("verdictUntimed"), persist.meanMs, server.meanMs);
    }
    else if (dominant == Dominant::OnCpu)
    {
      f.verdict = Format(rule.Text("verdictOnCpu"), persist.meanMs, server.meanMs, 100 * persist.parts.OnCpuShare()) +
                  rule.Text(input_.configuration.storageCompression ? "onCpuCompression" : "onCpuHashing");
    }
    else
    {
      f.verdict = Say(rule.Text("verdictBlocked"),
                      {persist.meanMs, server.meanMs, 100 * persist.parts.BlockedShare(), storage, index});
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
    f.explanation = rule.Text("explanation");
    if (split)
    {
      f.explanation += Say(rule.Text("explanationSplit"), {PartsText(persist)});
    }
    if (split && dominant == Dominant::OnCpu && input_.configuration.storageCompression)
    {
      f.fix.configuration.emplace_back("StorageCompression", false);
      f.fix.action = rule.Text("actionCompression");
      f.fix.effect = rule.MeasuredEffect(rule.Text("effectCompressionUntimed"));
      f.confidence = "medium";
      f.confidenceReason = rule.Text("confidenceCompression");
      return;
    }
    if (storagePlugin.empty())
    {
      f.fix.configuration.emplace_back("IngestPerf.TimedStorage", true);
      f.fix.action = rule.Text("actionTimedStorage");
      f.fix.effect = rule.Text("effectTimedStorage");
    }
    else
    {
      f.fix.action = Say(rule.Text("actionStoragePlugin"), {storagePlugin, index});
      f.fix.effect = rule.Text("effectStoragePlugin");
    }
    f.confidence = split ? "medium" : "low";
    f.confidenceReason = rule.Text(split ? "confidenceSplit" : "confidenceUntimed");
  }
}
