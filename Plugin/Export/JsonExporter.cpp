#include "Export/JsonExporter.h"

#include "Export/JsonFigures.h"
#include "Export/StatsTablesExporter.h"
#include "Platform/JsonText.h"

#include "Export/VocabularyExporter.h"
#include "Labels/PeerPseudonym.h"
#include "Platform/FaultInjection.h"
#include "Recording/Unobservable.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <string>
#include <utility>

namespace IngestPerf
{
  namespace
  {
    // One part of a phase: its mean over the split instances, its share of their mean duration, and,
    // where kept (a transport since the reset), its quantiles. includesWaitingForCpuOf: the
    // instances without a run delay, whose wait for a CPU this part holds (0: none).
    void WritePart(JsonWriter& out, uint64_t sumNs, uint64_t count, uint64_t durationNs,
                   const HistogramSnapshot& histogram, uint64_t includesWaitingForCpuOf = 0)
    {
      out.BeginObject();
      out.Member("mean", MeanMs(sumNs, count));
      out.Member("share",
                 durationNs == 0 ? 0.0 : RoundTo(static_cast<double>(sumNs) / static_cast<double>(durationNs), 0.001));
      if (histogram.Count() != 0)
      {
        const double levels[] = {0.5, 0.9, 0.99};
        int64_t values[3];
        histogram.ValuesAtQuantiles(levels, 3, values);
        out.Member("p50", NanosecondsToMilliseconds(values[0]));
        out.Member("p90", NanosecondsToMilliseconds(values[1]));
        out.Member("p99", NanosecondsToMilliseconds(values[2]));
      }
      if (includesWaitingForCpuOf != 0)
      {
        out.Member("includesWaitingForCpuOf", includesWaitingForCpuOf);
      }
      out.EndObject();
    }

    // Where the phase's time went over the instances that had it split (PhasePartsSampling): the
    // three means add up to the mean duration of those instances.
    // quantiles: the parts' quantiles, kept for a transport since the reset; nullptr elsewhere.
    void WriteParts(JsonWriter& out, const PhasePartsSnapshot& parts, const PhasePartQuantiles* quantiles,
                    const char* reason)
    {
      if (reason != nullptr)
      {
        WriteUnobservable(out, reason);
        return;
      }
      out.BeginObject();
      out.Member("sampled", parts.sampled);
      if (parts.sampled != 0)
      {
        out.Member("mean", MeanMs(parts.durationNs, parts.sampled));
        const PhasePartQuantiles none;
        const PhasePartQuantiles& q = quantiles != nullptr ? *quantiles : none;
        out.Key("onCpu");
        WritePart(out, parts.cpuNs, parts.sampled, parts.durationNs, q.onCpu);
        out.Key("waitingForCpu");
        if (parts.runDelaySampled == 0)
        {
          const char* noRunDelay = RunDelayUnobservableReason();
          WriteUnobservable(out,
                            noRunDelay != nullptr ? noRunDelay : "the kernel gave no run delay for these instances");
        }
        else
        {
          WritePart(out, parts.runDelayNs, parts.sampled, parts.durationNs, q.waitingForCpu);
        }
        // The instances without a run delay count their wait for a CPU in "blocked".
        out.Key("blocked");
        WritePart(out, parts.BlockedNs(), parts.sampled, parts.durationNs, q.blocked,
                  parts.sampled - std::min(parts.sampled, parts.runDelaySampled));
      }
      out.EndObject();
    }

    double PerSecond(double amount, int64_t spanNs)
    {
      return spanNs <= 0 ? 0.0 : RoundTo(amount * 1e9 / static_cast<double>(spanNs), 0.001);
    }

    void WriteRate(JsonWriter& out, uint64_t instances, uint64_t bytes, double seconds)
    {
      out.BeginObject();
      out.Member("instancesPerSecond", RoundTo(static_cast<double>(instances) / seconds, 0.001));
      out.Member("megabytesPerSecond", RoundTo(static_cast<double>(bytes) / 1e6 / seconds, 0.001));
      out.EndObject();
    }

    // How a transport is written. includeRates: the per-second windows (transports since the reset
    // only). withReasons: unobservable phases as objects with their reason; groups leave them out,
    // the transports above them say why. partQuantiles: the quantiles of the parts of the
    // transport's phases (kPhaseCount), or nullptr. windowNs: over a window, the throughput is over
    // its covered seconds (no active span, no per-second rates).
    struct TransportForm
    {
      bool includeRates = true;
      bool withReasons = true;
      const PhasePartQuantiles* partQuantiles = nullptr;
      const int64_t* windowNs = nullptr;
      // From the ring of recent instances, which keeps stored and duplicate instances only: the
      // other outcomes and the counters are null (counted per transport in the window).
      bool recentOnly = false;
    };

    void WriteTransportMembers(JsonWriter& out, const TransportSnapshot& transport, const PluginStatus& status,
                               const Transport* which, const TransportForm& form)
    {
      out.Key("instances");
      out.BeginObject();
      for (size_t o = 0; o < kOutcomeCount; o++)
      {
        out.Key(DefinitionOf(static_cast<Outcome>(o)).name);
        const bool kept =
          static_cast<Outcome>(o) == Outcome::Stored || static_cast<Outcome>(o) == Outcome::AlreadyStored;
        form.recentOnly && !kept ? out.Null() : out.UInt(transport.outcomes[o]);
      }
      out.Key("failureReasons");
      if (form.recentOnly)
      {
        out.Null();
      }
      else
      {
        out.BeginObject();
        for (size_t r = 0; r < kFailureReasonCount; r++)
        {
          out.Member(DefinitionOf(static_cast<FailureReason>(r)).name,
                     transport.Failures(static_cast<FailureReason>(r)));
        }
        out.EndObject();
      }
      const std::pair<const char*, Counter> counters[] = {{"storedWithoutTimeline", Counter::StoredWithoutTimeline},
                                                          {"transcodeAttempts", Counter::TranscodeAttempts},
                                                          {"transcodedWithoutHook", Counter::TranscodedWithoutHook}};
      for (const auto& counter : counters)
      {
        out.Key(counter.first);
        form.recentOnly ? out.Null() : out.UInt(transport.Count(counter.second));
      }
      out.EndObject();

      const uint64_t stored = transport.outcomes[static_cast<size_t>(Outcome::Stored)];
      const double megabytes = static_cast<double>(transport.storedBytes.Sum()) / 1e6;
      out.Key("throughput");
      out.BeginObject();
      // Over the time ingest was active (the first start to the last store), in a window as since the
      // start: idle minutes before or after do not dilute the rate.
      const int64_t span = transport.ActiveSpanNs();
      if (form.windowNs != nullptr)
      {
        out.Member("seconds", Seconds(*form.windowNs));
      }
      out.Member("activeSeconds", RoundTo(static_cast<double>(span) / 1e9, 0.000001));
      out.Member("instancesPerSecond", PerSecond(static_cast<double>(stored), span));
      out.Member("megabytesPerSecond", PerSecond(megabytes, span));
      if (form.windowNs == nullptr)
      {
        if (form.includeRates)
        {
          out.Key("last10s");
          WriteRate(out, transport.last10sInstances, transport.last10sBytes, 10);
          out.Key("last60s");
          WriteRate(out, transport.last60sInstances, transport.last60sBytes, 60);
        }
      }
      out.EndObject();

      if (which == nullptr || *which == Transport::Rest || *which == Transport::Plugin)
      {
        out.Key("httpAnswers");
        out.BeginObject();
        const uint64_t accepting = transport.Count(Counter::AnswersAcceptingCompression);
        out.Member("requests", accepting + transport.Count(Counter::AnswersWithoutCompression));
        out.Member("clientAcceptsCompression", accepting);
        const Configuration& configuration = status.configuration;
        const bool compresses = configuration.httpCompressionEnabled && configuration.orthanc.CompressesSmallAnswers();
        out.Member("compressedByOrthanc", compresses ? accepting : 0);
        out.Member("HttpCompressionEnabled", configuration.httpCompressionEnabled);
        // From Orthanc 1.12.2, answers under 2048 bytes are never compressed (null: any size is).
        out.Key("smallestCompressedBytes");
        configuration.orthanc.CompressesSmallAnswers() ? out.Null() : out.Int(2048);
        out.EndObject();
      }

      out.Key("bytesPerInstance");
      out.BeginObject();
      out.Key("received");
      WriteHistogram(out, transport.receivedBytes, false);
      out.Key("stored");
      WriteHistogram(out, transport.storedBytes, false);
      out.EndObject();

      out.Key("phases");
      out.BeginObject();
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        const Phase phase = static_cast<Phase>(p);
        const char* reason = PhaseUnobservableReason(status, which, phase);
        if (reason != nullptr)
        {
          if (form.withReasons)
          {
            out.Key(DefinitionOf(phase).name);
            WriteUnobservable(out, reason);
          }
          continue;
        }
        out.Key(DefinitionOf(phase).name);
        out.BeginObject();
        WriteHistogramMembers(out, transport.phases[p], true);
        if (phase == Phase::ChangeDispatch)
        {
          out.Member("deliveredBeforeOnStored", transport.Count(Counter::ChangesBeforeStored));
        }
        out.Key("parts");
        WriteParts(out, transport.PartsOf(phase), form.partQuantiles != nullptr ? form.partQuantiles + p : nullptr,
                   PhasePartsUnobservableReason(status, phase));
        out.EndObject();
      }
      out.EndObject();
    }

    void WriteTransport(JsonWriter& out, const TransportSnapshot& transport, const PluginStatus& status,
                        const Transport* which, const TransportForm& form)
    {
      out.BeginObject();
      WriteTransportMembers(out, transport, status, which, form);
      out.EndObject();
    }

    // The transports an answer lists, in their order, each under its name, then "all" (every
    // transport merged) unless the query asked for one: write(which) writes the value of each, which
    // is nullptr for "all". What the transports, the recent windows and the label view each list.
    template <typename Write>
    void WriteListedTransports(JsonWriter& out, const StatsQuery& filter, const Write& write)
    {
      out.BeginObject();
      for (size_t t = 0; t < kTransportCount; t++)
      {
        const Transport transport = static_cast<Transport>(t);
        if (filter.ListsTransport(transport))
        {
          out.Key(TransportName(transport));
          write(&transport);
        }
      }
      if (filter.scope != StatsQuery::Scope::Single)
      {
        out.Key("all");
        write(nullptr);
      }
      out.EndObject();
    }
  }


  namespace
  {
    void WriteWindowInfo(JsonWriter& out, Window window, const WindowSnapshot& snapshot)
    {
      out.BeginObject();
      out.Member("name", WindowName(window));
      out.Member("seconds", Seconds(snapshot.coveredNs));
      out.Member("slotSeconds", Seconds(snapshot.slotNs));
      out.Member("fullSlots", snapshot.fullSlots);
      out.Member("droppedAtRotation", snapshot.droppedAtRotation);
      out.Member("straddledRotation", snapshot.straddledRotation);
      out.EndObject();
    }

    // The members of an answer with labels or groupBy: "query", "transports", "groups".
    void WriteSlotsView(JsonWriter& out, const IngestReport& input, const StatsQuery& filter)
    {
      const LabelCatalog& catalog = *input.catalog;
      const GroupedSnapshot& grouped = input.grouped;
      const bool hashPeers = input.status->configuration.hashPeers;

      out.Key("query");
      out.BeginObject();
      out.Key("filters");
      out.BeginObject();
      if (filter.scope == StatsQuery::Scope::Single)
      {
        out.Member("transport", TransportName(filter.transport));
      }
      for (const auto& label : filter.labels)
      {
        // A value seen is echoed as its pseudonym; a pseudonym as given (not hashed twice).
        LabelId seen;
        const bool asGiven =
          hashPeers && IsPseudonym(label.first, label.second) && !catalog.Find(label.first, label.second, seen);
        out.Member(LabelDimensionName(label.first),
                   asGiven ? label.second : ExportedLabelValue(label.first, label.second, hashPeers));
      }
      out.EndObject();
      out.Key("groupBy");
      filter.hasGroupBy ? out.String(LabelDimensionName(filter.groupBy)) : out.Null();
      out.Key("window");
      grouped.fromRecent ? out.String(WindowName(filter.window)) : out.Null();
      out.Member("streamsMatched", grouped.streamsMatched);
      out.Member("seriesMatched", grouped.streamsMatched);  // its former name, for one release (NEWS)
      out.EndObject();

      TransportForm form;
      form.includeRates = false;
      if (grouped.fromRecent)
      {
        // A window's senders: from the ring of recent instances, which says how much of it it held.
        out.Key("window");
        WriteWindowInfo(out, filter.window, input.window);
        out.Key("recentInstances");
        out.BeginObject();
        out.Member("complete", grouped.recentComplete);
        out.Member("seconds", Seconds(std::max<int64_t>(0, input.snapshot.takenNs - grouped.recentFromNs)));
        out.Member("matched", grouped.recentMatched);
        out.Member("capacity", grouped.recentCapacity);
        out.Member("skipped", grouped.recentSkipped);
        out.EndObject();
        form.recentOnly = true;
        form.windowNs = &input.window.coveredNs;
      }
      out.Key("transports");
      WriteListedTransports(out, filter, [&](const Transport* which) {
        if (which != nullptr)
        {
          WriteTransport(out, grouped.transports[static_cast<size_t>(*which)], *input.status, which, form);
        }
        else
        {
          WriteTransport(out, MergeTransports(grouped.transports), *input.status, nullptr, form);
        }
      });

      if (filter.hasGroupBy)
      {
        std::vector<const std::pair<LabelId, TransportSnapshot>*> groups;
        for (const auto& group : grouped.groups)
        {
          groups.push_back(&group);
        }
        std::sort(groups.begin(), groups.end(), [](const auto* a, const auto* b) {
          return a->second.outcomes[static_cast<size_t>(Outcome::Stored)] >
                 b->second.outcomes[static_cast<size_t>(Outcome::Stored)];
        });
        form.withReasons = false;
        out.Key("groups");
        out.BeginArray();
        for (const auto* group : groups)
        {
          const bool isTransport = filter.groupBy == LabelDimension::Transport;
          Transport transport = static_cast<Transport>(group->first - kFirstValueLabel);
          if (isTransport && grouped.fromRecent)
          {
            ParseTransport(transport, grouped.groupNames[group->first].c_str());
          }
          out.BeginObject();
          WriteTransportMembers(out, group->second, *input.status, isTransport ? &transport : nullptr, form);
          out.Key("labels");
          out.BeginObject();
          const std::string name =
            grouped.fromRecent ? grouped.groupNames[group->first] : catalog.Name(filter.groupBy, group->first);
          out.Member(LabelDimensionName(filter.groupBy), ExportedLabelValue(filter.groupBy, name, hashPeers));
          out.EndObject();
          out.EndObject();
        }
        out.EndArray();
      }
    }
  }


  std::string IsoUtc(int64_t wallNs)
  {
    const time_t seconds = static_cast<time_t>(wallNs / 1000000000);
    struct tm utc;
    gmtime_r(&seconds, &utc);
    char buffer[64];
    snprintf(buffer, sizeof(buffer), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
             utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>((wallNs / 1000000) % 1000));
    return buffer;
  }


  Json::Value ExportSinceReset(const SinceReset& history)
  {
    Json::Value value;
    value["since"_key] = IsoUtc(history.sinceWallNs);
    value["stored"_key] = Json::UInt64(history.stored);
    value["firstStored"_key] =
      history.firstStoredWallNs == 0 ? Json::Value(Json::nullValue) : Json::Value(IsoUtc(history.firstStoredWallNs));
    value["lastStored"_key] =
      history.lastStoredWallNs == 0 ? Json::Value(Json::nullValue) : Json::Value(IsoUtc(history.lastStoredWallNs));
    value["lastStoredSecondsAgo"_key] =
      history.lastStoredWallNs == 0
        ? Json::Value(Json::nullValue)
        : Json::Value(RoundTo(
            static_cast<double>(std::max<int64_t>(0, history.nowWallNs - history.lastStoredWallNs)) / 1e9, 0.001));
    return value;
  }


  namespace
  {
    void WriteRecentOne(JsonWriter& out, const TransportSnapshot& transport, int64_t coveredNs)
    {
      const uint64_t stored = transport.outcomes[static_cast<size_t>(Outcome::Stored)];
      const HistogramSnapshot& total = transport.phases[static_cast<size_t>(Phase::ServerTotal)];
      out.BeginObject();
      out.Member("seconds", Seconds(coveredNs));
      out.Member("stored", stored);
      const int64_t span = transport.ActiveSpanNs();
      out.Member("activeSeconds", RoundTo(static_cast<double>(span) / 1e9, 0.000001));
      out.Member("instancesPerSecond", PerSecond(static_cast<double>(stored), span));
      out.Key("serverTotalMs");
      out.BeginObject();
      for (const Quantile& quantile : {kQuantiles[0], kQuantiles[2]})
      {
        out.Key(quantile.name);
        total.Count() == 0 ? out.Null() : out.Real(NanosecondsToMilliseconds(total.ValueAtQuantile(quantile.q)));
      }
      out.EndObject();
      out.EndObject();
    }

    // The last minute and five minutes of each transport of the answer, in short.
    void WriteRecent(JsonWriter& out, const std::array<WindowSnapshot, 2>& recent, const StatsQuery& filter)
    {
      const Window windows[2] = {Window::OneMinute, Window::FiveMinutes};
      WriteListedTransports(out, filter, [&](const Transport* which) {
        out.BeginObject();
        for (size_t w = 0; w < 2; w++)
        {
          out.Key(WindowName(windows[w]));
          if (which != nullptr)
          {
            WriteRecentOne(out, recent[w].transports[static_cast<size_t>(*which)], recent[w].coveredNs);
          }
          else
          {
            WriteRecentOne(out, MergeTransports(recent[w].transports), recent[w].coveredNs);
          }
        }
        out.EndObject();
      });
    }
  }


#ifdef INGEST_PERF_FAULT_INJECTION
  namespace
  {
    // The test build only: what was injected, to compare with what the plugin counted.
    void WriteFaultInjection(JsonWriter& out)
    {
      const FaultInjection::Settings& settings = FaultInjection::Current();
      const FaultInjection::Counts injected = FaultInjection::Injected();
      out.BeginObject();
      out.Member("sdkProbability", settings.sdk);
      out.Member("allocProbability", settings.alloc);
      out.Member("seed", settings.seed);
      out.Member("sdkCallsInjected", injected.sdkCalls);
      out.Member("allocationsInjected", injected.allocations);
      out.EndObject();
    }
  }


#endif
  void WriteStats(JsonWriter& out, const IngestReport& input, const StatsQuery& filter)
  {
    const StatsSnapshot& snapshot = input.snapshot;
    const PluginStatus& status = *input.status;
    out.BeginObject();

    out.Member("plugin", "ingest-perf");
    out.Member("version", status.pluginVersion);
    out.Member("orthancVersion", status.orthancVersion);
    // What the plugin does, before any figure: a disabled or inert plugin has nothing to show.
    out.Member("state", PluginStateName(status.state));
    out.Member("reason", status.stateReason);
    out.Member("enabled", status.Running());
    out.Key("notInEffect");
    WriteNotInEffect(out, status);
    out.Member("since", IsoUtc(snapshot.resetWallNs));
    out.Member("elapsedSeconds", RoundTo(static_cast<double>(snapshot.takenNs - snapshot.resetNs) / 1e9, 0.001));
    out.Member("sinceReset", ExportSinceReset(snapshot.History()));
    out.Key("units");
    out.BeginObject();
    out.Member("durations", "milliseconds");
    out.Member("sizes", "bytes");
    out.Member("megabyte", "1,000,000 bytes");
    out.EndObject();

    const Configuration& configuration = status.configuration;
    out.Key("configuration");
    out.BeginObject();
    out.Member("Enable", configuration.enable);
    out.Member("ReceivedInstanceCallback", ReceivedInstanceModeValue(configuration.receivedInstanceCallback));
    out.Member("MaxThreads", configuration.maxThreads);
    out.Member("ChangeTableSize", configuration.changeTableSize);
    out.Member("MaxPeers", configuration.maxPeers);
    out.Member("MaxLabelValues", configuration.maxLabelValues);
    out.Member("MaxStreams", configuration.maxStreams);
    out.Member("RecentInstances", configuration.recentInstances);
    out.Member("TranscodeTiming", TranscodeTimingName(configuration.transcodeTiming));
    out.Member("TimedStorage", configuration.timedStorage);
    out.Member("HashPeers", configuration.hashPeers);
    out.Member("HttpConnectionIdentity", configuration.httpConnectionIdentity);
    out.Member("PhasePartsSampling", configuration.phasePartsSampling);
    out.Key("PrometheusLabels");
    out.BeginArray();
    for (const std::string& label : configuration.prometheusLabels)
    {
      out.String(label);
    }
    out.EndArray();
    out.EndObject();
    out.Key("orthancOptions");
    out.BeginObject();
    if (configuration.overwriteInstancesMode.empty())
    {
      out.Member("OverwriteInstances", configuration.overwriteInstances);
    }
    else
    {
      out.Member("OverwriteInstances", configuration.overwriteInstancesMode);  // as configured (1.13's modes)
    }
    out.Member("DicomScpTimeout", configuration.dicomScpTimeoutSeconds);
    out.Key("IngestTranscoding");
    configuration.ingestTranscoding ? out.String(configuration.ingestTranscodingSyntax) : out.Null();
    out.EndObject();
    out.Key("dicomTcpNoDelay");
    out.BeginObject();
    out.Member("inEffect", status.dicomTcpNoDelay.inEffect);
    out.Member("source", status.dicomTcpNoDelay.source);
    out.Member("detail", status.dicomTcpNoDelay.detail);
    out.EndObject();

    out.Key("hooks");
    out.BeginObject();
    WriteHook(out, "httpRequestFilter", status.hooks.httpRequestFilter);
    WriteHook(out, "receivedInstance", status.hooks.receivedInstance.View());
    WriteHook(out, "transcoder", status.hooks.transcoder);
    WriteHook(out, "instanceFilter", status.hooks.instanceFilter);
    WriteHook(out, "cstoreFilter", status.hooks.cstoreFilter);
    WriteHook(out, "storedInstance", status.hooks.storedInstance);
    WriteHook(out, "change", status.hooks.change);
    WriteOtherPlugins(out, status.laterPlugins);
    out.EndObject();

    // The records are read after the statistics: one opened in between is 0 ms old.
    const auto ageMs = [&](int64_t startNs) {
      return startNs == 0 ? 0.0 : NanosecondsToMilliseconds(std::max<int64_t>(0, snapshot.takenNs - startNs));
    };
    out.Key("openRecords");
    out.BeginObject();
    out.Member("count", input.openRecords.count);
    out.Member("oldestAgeMs", ageMs(input.openRecords.oldestStartNs));
    out.Key("receiving");
    out.BeginObject();
    out.Member("count", input.openRecords.receivingCount);
    out.Member("oldestAgeMs", ageMs(input.openRecords.receivingOldestStartNs));
    out.EndObject();
    out.Member("startedBeforeReset", input.openRecords.startedBeforeReset);
    out.Member("threadsTracked", input.openRecords.threadsTracked);
    out.Member("threadsUntracked", input.openRecords.threadsUntracked);
    out.EndObject();

    INGEST_PERF_INJECT_ALLOCATION_FAULT();
    out.Key("errors");
    out.BeginObject();
    out.Member("callbackExceptions", snapshot.callbackErrors);
    out.Member("changeCorrelationSkipped", input.correlationSkipped);
    out.Member("associationTrackingSkipped", input.associationSkipped);
    out.Member("sdkCallsFailed", snapshot.sdkCallsFailed);
    out.Member("concludedTooEarly", snapshot.concludedEarly);
    out.Member("recordedOnOrthancsThread", snapshot.storedQueueFull);
    out.Member("changeTableEvictions", input.correlationEvicted);
    out.Member("failedAnswers", input.failedAnswers);
    out.EndObject();
#ifdef INGEST_PERF_FAULT_INJECTION
    out.Key("faultInjection");
    WriteFaultInjection(out);
#endif

    // The figures first: the recent minutes, the transports (or the label sets asked for); then the
    // plugin's own tables, the associations, the changes and the plugin's cost.
    // Every transport since the reset, merged once (its histograms: a few hundred buckets per phase).
    const TransportSnapshot sinceReset = snapshot.AllTransports();
    if (filter.UsesStreams() && input.catalog != nullptr && input.collected)
    {
      WriteSlotsView(out, input, filter);
    }
    else
    {
      INGEST_PERF_INJECT_ALLOCATION_FAULT();
      const bool windowed = filter.hasWindow && input.collected && input.windowsKept;
      if (windowed)
      {
        out.Key("window");
        WriteWindowInfo(out, filter.window, input.window);
      }
      else if (input.collected && input.windowsKept)
      {
        out.Key("recent");
        WriteRecent(out, input.recent, filter);
      }
      out.Key("transports");
      const std::array<TransportSnapshot, kTransportCount>& source =
        windowed ? input.window.transports : snapshot.transports;
      WriteListedTransports(out, filter, [&](const Transport* which) {
        TransportForm form;
        if (windowed)
        {
          form.includeRates = false;
          form.windowNs = &input.window.coveredNs;
        }
        else if (which != nullptr)
        {
          form.partQuantiles = snapshot.PartQuantilesOf(*which);
        }
        if (which != nullptr)
        {
          WriteTransport(out, source[static_cast<size_t>(*which)], status, which, form);
        }
        else if (windowed)
        {
          WriteTransport(out, MergeTransports(source), status, nullptr, form);
        }
        else
        {
          WriteTransport(out, sinceReset, status, nullptr, form);  // merged once, above
        }
      });
    }

    INGEST_PERF_INJECT_ALLOCATION_FAULT();
    if (input.catalog != nullptr)
    {
      out.Key("labels");
      WriteLabels(out, *input.catalog, input.streams, status.configuration.hashPeers);
    }
    out.Key("storage");
    WriteStorage(out, status, input.collected ? &input.storage : nullptr);
    if (input.collected && input.catalog != nullptr)
    {
      out.Key("associations");
      WriteAssociations(out, input.associations, *input.catalog, status.configuration);
    }
    if (input.collected)
    {
      out.Key("changes");
      WriteChanges(out, input.changes, sinceReset);
      out.Key("pluginCost");
      WritePluginCost(out, input.pluginCost, sinceReset);
    }

    out.Key("unobservable");
    WriteUnobservableSteps(out, status);
    out.Key("definitions");
    static const JsonFragment definitions(ExportDefinitions(), 1);
    out.Fragment(definitions);
    out.EndObject();
  }
}
