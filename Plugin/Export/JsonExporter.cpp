#include "Export/JsonExporter.h"

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
    struct Quantile
    {
      const char* name;
      double q;
    };

    const Quantile kQuantiles[] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}};

    double Round(double value, double resolution)
    {
      return std::round(value / resolution) * resolution;
    }

    void WriteUnobservable(JsonWriter& out, const char* reason)
    {
      out.BeginObject();
      out.Member("observable", false);
      out.Member("reason", reason);
      out.EndObject();
    }

    double MeanMs(uint64_t sumNs, uint64_t count)
    {
      return count == 0 ? 0.0 : Round(static_cast<double>(sumNs) / static_cast<double>(count) / 1e6, 0.001);
    }

    // count, sum, mean, min, the quantiles and max (null while empty), then "saturated" if any.
    void WriteHistogramMembers(JsonWriter& out, const HistogramSnapshot& histogram, bool durations)
    {
      out.Member("count", histogram.Count());
      constexpr size_t kCount = sizeof(kQuantiles) / sizeof(kQuantiles[0]);
      if (histogram.Count() == 0)
      {
        for (const char* name : {"sum", "mean", "min"})
        {
          out.Member(name, nullptr);
        }
        for (const Quantile& quantile : kQuantiles)
        {
          out.Member(quantile.name, nullptr);
        }
        out.Member("max", nullptr);
      }
      else
      {
        const auto value = [&out, durations](int64_t v) {
          durations ? out.Real(NanosecondsToMilliseconds(v)) : out.Int(v);
        };
        out.Key("sum");
        durations ? out.Real(NanosecondsToMilliseconds(static_cast<int64_t>(histogram.Sum())))
                  : out.UInt(histogram.Sum());
        out.Key("mean");
        durations ? out.Real(NanosecondsToMilliseconds(std::llround(histogram.Mean())))
                  : out.Real(Round(histogram.Mean(), 1));
        out.Key("min");
        value(histogram.Min());
        double levels[kCount];
        int64_t values[kCount];
        for (size_t i = 0; i < kCount; i++)
        {
          levels[i] = kQuantiles[i].q;
        }
        histogram.ValuesAtQuantiles(levels, kCount, values);
        for (size_t i = 0; i < kCount; i++)
        {
          out.Key(kQuantiles[i].name);
          value(values[i]);
        }
        out.Key("max");
        value(histogram.Max());
      }
      if (histogram.Saturated() != 0)
      {
        out.Member("saturated", histogram.Saturated());
      }
    }

    void WriteHistogram(JsonWriter& out, const HistogramSnapshot& histogram, bool durations)
    {
      out.BeginObject();
      WriteHistogramMembers(out, histogram, durations);
      out.EndObject();
    }

    // One part of a phase: its mean over the split instances, its share of their mean duration, and,
    // where kept (a transport since the reset), its quantiles. includesWaitingForCpuOf: the
    // instances without a run delay, whose wait for a CPU this part holds (0: none).
    void WritePart(JsonWriter& out, uint64_t sumNs, uint64_t count, uint64_t durationNs,
                   const HistogramSnapshot& histogram, uint64_t includesWaitingForCpuOf = 0)
    {
      out.BeginObject();
      out.Member("mean", MeanMs(sumNs, count));
      out.Member("share",
                 durationNs == 0 ? 0.0 : Round(static_cast<double>(sumNs) / static_cast<double>(durationNs), 0.001));
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
      return spanNs <= 0 ? 0.0 : Round(amount * 1e9 / static_cast<double>(spanNs), 0.001);
    }

    void WriteRate(JsonWriter& out, uint64_t instances, uint64_t bytes, double seconds)
    {
      out.BeginObject();
      out.Member("instancesPerSecond", Round(static_cast<double>(instances) / seconds, 0.001));
      out.Member("megabytesPerSecond", Round(static_cast<double>(bytes) / 1e6 / seconds, 0.001));
      out.EndObject();
    }

    double Seconds(int64_t ns)
    {
      return Round(static_cast<double>(ns) / 1e9, 0.001);
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
      out.Member("activeSeconds", Round(static_cast<double>(span) / 1e9, 0.000001));
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

    void WriteHook(JsonWriter& out, const char* name, const HookState& hook)
    {
      out.Key(name);
      out.BeginObject();
      out.Member("registered", hook.registered);
      if (!hook.state.empty())
      {
        out.Member("state", hook.state);
      }
      if (!hook.registered)
      {
        out.Member("reason", hook.reason);
      }
      if (!hook.cost.empty())
      {
        out.Member("cost", hook.cost);
      }
      out.EndObject();
    }

    // This plugin's second callbacks (a hook like the others: registered, or why not), and which
    // plugins' callbacks run before this plugin's and which after.
    void WriteOtherPlugins(JsonWriter& out, const LaterPluginsHooks& later)
    {
      out.Key("otherPlugins");
      out.BeginObject();
      const bool registered = later.Filter() == LaterPluginsHooks::State::Registered &&
                              later.Stored() == LaterPluginsHooks::State::Registered;
      out.Member("registered", registered);
      if (!registered)
      {
        out.Member("reason", later.loadedAfter.empty()
                               ? "no other plugin is loaded after this one: nothing runs between this plugin's "
                                 "callbacks and the end of Orthanc's chains"
                               : "registered at the first instance, from inside this plugin's first callbacks "
                                 "(see laterInstanceFilter, laterStoredInstance)");
      }
      for (const auto& list :
           {std::make_pair("loadedBefore", &later.loadedBefore), std::make_pair("loadedAfter", &later.loadedAfter)})
      {
        out.Key(list.first);
        out.BeginArray();
        for (const std::string& name : *list.second)
        {
          out.String(name);
        }
        out.EndArray();
      }
      out.Member("laterInstanceFilter", LaterPluginsHooks::Name(later.Filter()));
      out.Member("laterStoredInstance", LaterPluginsHooks::Name(later.Stored()));
      out.EndObject();
    }

    void WriteUnobservableSteps(JsonWriter& out, const PluginStatus& status)
    {
      out.BeginArray();
      for (const UnobservableStep& step : UnobservableSteps(status))
      {
        out.BeginObject();
        out.Member("what", step.what);
        out.Member("transport", step.transport);
        out.Member("reason", step.reason);
        out.EndObject();
      }
      out.EndArray();
    }
  }


  namespace
  {
    void WriteAssociations(JsonWriter& out, const AssociationsView& view, const LabelCatalog& catalog,
                           const Configuration& configuration)
    {
      out.BeginObject();
      out.Member("definition",
                 "one association per TCP connection of Orthanc's DICOM port: a C-STORE instance belongs to the "
                 "connection its calling address has open, less those that carried another calling AET (told apart "
                 "by connection); when several remain, inferred per calling AET as a chain of instances, each "
                 "received after the previous one was stored, within DicomScpTimeout (" +
                   std::to_string(configuration.dicomScpTimeoutSeconds) +
                   " s). Finished when its connection closes (inferred: once idle for longer than DicomScpTimeout, "
                   "or no connection from its address that may carry its AET is left)");

      out.Key("openConnections");
      out.BeginObject();
      if (view.connectionsReadNs != 0)
      {
        std::map<std::string, uint64_t> byRemoteIp;  // in the order of the addresses
        uint64_t count = 0;
        for (const DicomConnection& connection : view.connections)
        {
          if (connection.closedNs == 0)
          {
            count++;
            byRemoteIp[ExportedAddress(catalog.Name(LabelDimension::RemoteIp, connection.peer),
                                       configuration.hashPeers)]++;
          }
        }
        out.Member("count", count);
        out.Key("byRemoteIp");
        out.BeginObject();
        for (const auto& address : byRemoteIp)
        {
          out.Member(address.first.c_str(), address.second);
        }
        out.EndObject();
        out.Member("source", "Orthanc's own sockets on DicomPort " + std::to_string(configuration.dicomPort) +
                               " (read from its descriptors when an association arrives, and once a second while "
                               "Orthanc ingests): one per open association");
      }
      else
      {
        out.Member("observable", false);
        out.Member("reason", "not read yet: no DICOM association arrived since the plugin started, or /proc/self/fd "
                             "cannot be read");
      }
      out.EndObject();

      std::vector<std::pair<LabelId, HistogramSnapshot>> gaps;
      for (const auto& series : view.gaps)
      {
        const LabelId aet = series.first.Get(LabelDimension::RemoteAet);
        auto gap = std::find_if(gaps.begin(), gaps.end(), [aet](const auto& g) { return g.first == aet; });
        if (gap == gaps.end())
        {
          gaps.emplace_back(aet, HistogramSnapshot());
          gap = gaps.end() - 1;
        }
        gap->second.Merge(series.second);
      }

      // The rows by the name they show: the AETs whose ids an ageing (or two) has left, named
      // "(other)" now, are one "(other)" row with the AETs beyond MaxLabelValues, as labels.md says.
      std::vector<std::pair<std::string, PeerAssociations>> rows;
      for (const PeerAssociations& peer : view.peers)
      {
        const std::string name =
          peer.agedOut ? std::string("(aged out)")
                       : ExportedLabelValue(LabelDimension::RemoteAet,
                                            catalog.Name(LabelDimension::RemoteAet, peer.remoteAet, peer.generation),
                                            configuration.hashPeers);
        auto same = std::find_if(rows.begin(), rows.end(), [&name](const auto& row) { return row.first == name; });
        if (same == rows.end() || name != "(other)")
        {
          rows.emplace_back(name, peer);
          continue;
        }
        PeerAssociations& merged = same->second;
        merged.aets += peer.aets;
        merged.finished += peer.finished;
        merged.inProgress += peer.inProgress;
        merged.byConnection += peer.byConnection;
        merged.inferred += peer.inferred;
        merged.instancesPerAssociation.Merge(peer.instancesPerAssociation);
        merged.durationNs.Merge(peer.durationNs);
      }
      out.Key("byRemoteAet");
      out.BeginArray();
      const HistogramSnapshot noGap;
      for (const auto& row : rows)
      {
        const PeerAssociations& peer = row.second;
        out.BeginObject();
        out.Member("remoteAet", row.first);
        out.Member("distinctAets", peer.aets);
        out.Member("finished", peer.finished);
        out.Member("inProgress", peer.inProgress);
        out.Member("byConnection", peer.byConnection);
        out.Member("inferred", peer.inferred);
        out.Key("instancesPerAssociation");
        WriteHistogram(out, peer.instancesPerAssociation, false);
        out.Key("durationMs");
        WriteHistogram(out, peer.durationNs, true);
        // The gaps are the labelled streams' of the id as it is named now: an id an ageing gave to
        // another value is not this row's.
        const LabelId id = row.first == "(other)" ? kOtherLabel : peer.remoteAet;
        auto gap = std::find_if(gaps.begin(), gaps.end(), [id](const auto& g) { return g.first == id; });
        const bool same =
          !peer.agedOut && ExportedLabelValue(LabelDimension::RemoteAet, catalog.Name(LabelDimension::RemoteAet, id),
                                              configuration.hashPeers) == row.first;
        out.Key("gap");
        WriteHistogram(out, gap == gaps.end() || !same ? noGap : gap->second, true);
        out.EndObject();
      }
      out.EndArray();
      out.EndObject();
    }

    void WriteChanges(JsonWriter& out, const ChangeQueueSnapshot& changes, const TransportSnapshot& all)
    {
      out.BeginObject();
      out.Key("delivered");
      out.BeginObject();
      for (size_t type = 0; type < kChangeTypeCount; type++)
      {
        if (changes.delivered[type] != 0)
        {
          out.Member(ChangeTypeName(static_cast<uint32_t>(type)), changes.delivered[type]);
        }
      }
      if (changes.otherTypes != 0)
      {
        out.Member("other", changes.otherTypes);
      }
      out.EndObject();
      out.Member("newInstanceBacklog", changes.NewInstanceBacklog());
      out.Member("storedInstancesSinceStart", changes.storedInstances);
      out.Member("newInstanceChangesSinceStart", changes.newInstancesDelivered);
      out.Key("lagMs");
      out.BeginObject();
      out.Key("newInstance");
      out.BeginObject();
      WriteHistogramMembers(out, all.phases[static_cast<size_t>(Phase::ChangeDispatch)], true);
      out.Member("deliveredBeforeOnStored", all.Count(Counter::ChangesBeforeStored));
      out.EndObject();
      out.Key("newSeries");
      WriteHistogram(out, changes.newSeriesLag, true);
      out.Key("newStudy");
      WriteHistogram(out, changes.newStudyLag, true);
      out.Key("newPatient");
      WriteHistogram(out, changes.newPatientLag, true);
      out.Member("seriesStudyPatientNotTimed", changes.followedEarlyNewInstance);
      out.Key("stableSeriesStudyPatient");
      WriteUnobservable(out, "Stable* changes come StableAge seconds after the last instance of a resource; which "
                             "resource an instance belongs to is not known to the plugin without calling back into "
                             "Orthanc");
      out.EndObject();
      out.Key("perInstanceWhileBackloggedMs");
      WriteHistogram(out, changes.perInstanceWhileBacklogged, true);
      out.EndObject();
    }

    void WritePluginCost(JsonWriter& out, const PluginCostSnapshot& cost, const TransportSnapshot& all)
    {
      const uint64_t stored = all.outcomes[static_cast<size_t>(Outcome::Stored)];
      const auto perInstance = [&out, stored](const char* name, uint64_t ns) {
        out.Key(name);
        stored == 0 ? out.Null()
                    : out.Real(Round(static_cast<double>(ns) / 1000.0 / static_cast<double>(stored), 0.001));
      };
      out.BeginObject();
      out.Member("clock", "thread CPU time (CLOCK_THREAD_CPUTIME_ID): a preemption inside a timed call counts nothing");
      out.Key("callbacks");
      out.BeginObject();
      for (size_t c = 0; c < kCallbackCount; c++)
      {
        out.Key(CallbackName(static_cast<Callback>(c)));
        WriteHistogram(out, cost.callbacks[c], true);
      }
      out.EndObject();
      out.Member("sampling", "on each thread, one call in " + std::to_string(PluginCost::kSamplingPeriod) +
                               " is timed from entry to return; \"callbacks\" holds the timed calls, their totals are "
                               "their sum times " +
                               std::to_string(PluginCost::kSamplingPeriod));
      out.Member("samplingPeriod", PluginCost::kSamplingPeriod);
      // Wall time, every instance: what Orthanc's storing threads spent inside this plugin's hooks.
      out.Key("insideHooksPerInstanceMs");
      WriteHistogram(out, cost.insidePerInstance, true);
      const uint64_t callbacksNs = cost.CallbacksNs();
      const uint64_t threadNs = static_cast<uint64_t>(std::max<int64_t>(0, cost.watcher.activeCpuNs));
      const uint64_t totalNs = cost.IngestNs();
      out.Key("threads");
      out.BeginObject();
      out.Key("ingestWatcher");
      out.BeginObject();
      out.Member("running", cost.watcher.running);
      out.Member("cpuMs", NanosecondsToMilliseconds(static_cast<int64_t>(threadNs)));
      out.Member("ticks", cost.watcher.ticks);
      out.Member("idleCpuMs", NanosecondsToMilliseconds(cost.watcher.idleCpuNs));
      out.Member("idleWakes", cost.watcher.idleWakes);
      out.EndObject();
      out.EndObject();
      out.Member("callbacksMs", NanosecondsToMilliseconds(static_cast<int64_t>(callbacksNs)));
      out.Member("threadsMs", NanosecondsToMilliseconds(static_cast<int64_t>(threadNs)));
      out.Member("totalMs", NanosecondsToMilliseconds(static_cast<int64_t>(totalNs)));
      // While Orthanc is idle the plugin's thread sleeps: what its rare wakes cost, not per instance.
      out.Member("idleCpuMs", NanosecondsToMilliseconds(cost.watcher.idleCpuNs));
      out.Member("storedInstances", stored);
      perInstance("microsecondsPerStoredInstance", totalNs);
      perInstance("callbacksMicrosecondsPerStoredInstance", callbacksNs);
      perInstance("threadsMicrosecondsPerStoredInstance", threadNs);
      const uint64_t serverTotalNs = all.phases[static_cast<size_t>(Phase::ServerTotal)].Sum();
      out.Key("percentOfServerTotal");
      serverTotalNs == 0
        ? out.Null()
        : out.Real(Round(100.0 * static_cast<double>(totalNs) / static_cast<double>(serverTotalNs), 0.0001));
      out.EndObject();
    }

    void WriteStorage(JsonWriter& out, const PluginStatus& status,
                      const std::array<StorageOperationSnapshot, kStorageOperationCount>* operations)
    {
      const Configuration& configuration = status.configuration;
      out.BeginObject();
      out.Member("timed", status.storage.active);
      if (!status.storage.active)
      {
        out.Member("reason", status.storage.reason);
      }
      out.Key("root");
      status.storage.root.empty() ? out.Null() : out.String(status.storage.root);
      out.Member("SyncStorageArea", configuration.syncStorageArea);
      out.Member("StoreDicom", configuration.storeDicom);
      out.Member("StorageCompression", configuration.storageCompression);
      if (status.storage.active && operations != nullptr)
      {
        out.Key("operations");
        out.BeginObject();
        for (size_t i = 0; i < kStorageOperationCount; i++)
        {
          const StorageOperationSnapshot& operation = (*operations)[i];
          out.Key(StorageOperationName(static_cast<StorageOperation>(i)));
          out.BeginObject();
          WriteHistogramMembers(out, operation.durations, true);
          out.Member("bytes", operation.bytes);
          out.Member("failures", operation.failures);
          const uint64_t busyNs = operation.durations.Sum();
          out.Member(
            "megabytesPerSecond",
            busyNs == 0 ? 0.0 : Round(static_cast<double>(operation.bytes) * 1e3 / static_cast<double>(busyNs), 0.001));
          out.EndObject();
        }
        out.EndObject();
      }
      out.EndObject();
    }

    void WriteLabels(JsonWriter& out, const LabelCatalog& catalog, const StreamInfo& info, bool hashPeers)
    {
      out.BeginObject();
      for (size_t d = 0; d < kLabelDimensions; d++)
      {
        const LabelDimension dimension = static_cast<LabelDimension>(d);
        const LabelDictionary* dictionary = catalog.DictionaryOf(dimension);
        if (dictionary == nullptr)
        {
          continue;
        }
        out.Key(LabelDimensionName(dimension));
        out.BeginObject();
        out.Member("capacity", dictionary->Capacity());
        out.Member("overflowed", dictionary->Overflowed());
        out.Member("contended", dictionary->Contended());
        out.Member("withheld", dictionary->Withheld());
        out.Key("values");
        out.BeginArray();
        for (size_t i = 0; i < dictionary->Capacity(); i++)
        {
          const LabelId id = static_cast<LabelId>(kFirstValueLabel + i);
          const std::string name = dictionary->Name(id);
          if (name != "(other)")
          {
            out.String(ExportedLabelValue(dimension, name, hashPeers));
          }
        }
        out.EndArray();
        out.EndObject();
      }
      out.Key("streams");
      out.BeginObject();
      out.Member("capacity", info.capacity);
      out.Member("used", info.used);
      out.Member("overflowed", info.overflowed);
      out.Member("bytesEach", info.bytesEach);
      out.EndObject();
      // The values learned are forgotten when a table is three quarters full, at most once a minute:
      // what was counted under them is then under "(other)".
      out.Key("agedOut");
      out.BeginObject();
      out.Member("times", info.rotations);
      out.Member("streamsFolded", info.folded);
      out.Key("lastSecondsAgo");
      info.lastRotationAgoNs < 0 ? out.Null() : out.Real(Seconds(info.lastRotationAgoNs));
      out.EndObject();
      out.EndObject();
    }

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

  double NanosecondsToMilliseconds(int64_t ns)
  {
    return static_cast<double>(std::llround(static_cast<double>(ns) / 100.0)) / 10000.0;
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
        : Json::Value(Round(
            static_cast<double>(std::max<int64_t>(0, history.nowWallNs - history.lastStoredWallNs)) / 1e9, 0.001));
    return value;
  }


  namespace
  {
    // What the configuration asked for and does not have, first in every answer: an option that
    // silently did nothing (another plugin holding the storage area, say) misleads a reader.
    void WriteNotInEffect(JsonWriter& out, const PluginStatus& status)
    {
      out.BeginArray();
      const auto add = [&out](const std::string& option, const std::string& reason) {
        out.BeginObject();
        out.Member("option", option);
        out.Member("reason", reason);
        out.EndObject();
      };
      const Configuration& configuration = status.configuration;
      for (const UnknownOption& unknown : configuration.unknownOptions)
      {
        add(std::string(kConfigurationSection) + "." + unknown.key, unknown.Message() + ": ignored");
      }
      for (const RemovedOption& removed : configuration.removedOptions)
      {
        add(std::string(kConfigurationSection) + "." + removed.key, removed.Message());
      }
      if (status.state == PluginState::Inert)
      {
        add(kConfigurationSection, status.stateReason);
      }
      else if (status.state != PluginState::Disabled)  // disabled: said by "state", nothing was asked for
      {
        if (configuration.timedStorage && !status.storage.active)
        {
          add("IngestPerf.TimedStorage", status.storage.reason);
        }
        if (configuration.transcodeTiming != TranscodeTiming::Off && !status.hooks.transcoder.registered)
        {
          add("IngestPerf.TranscodeTiming", status.hooks.transcoder.reason);
        }
        if (status.hooks.receivedInstance.Get() == ReceivedInstanceHook::State::Refused)
        {
          add("IngestPerf.ReceivedInstanceCallback", status.hooks.receivedInstance.View().reason);
        }
      }
      out.EndArray();
    }

    void WriteRecentOne(JsonWriter& out, const TransportSnapshot& transport, int64_t coveredNs)
    {
      const uint64_t stored = transport.outcomes[static_cast<size_t>(Outcome::Stored)];
      const HistogramSnapshot& total = transport.phases[static_cast<size_t>(Phase::ServerTotal)];
      out.BeginObject();
      out.Member("seconds", Seconds(coveredNs));
      out.Member("stored", stored);
      const int64_t span = transport.ActiveSpanNs();
      out.Member("activeSeconds", Round(static_cast<double>(span) / 1e9, 0.000001));
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
    out.Member("elapsedSeconds", Round(static_cast<double>(snapshot.takenNs - snapshot.resetNs) / 1e9, 0.001));
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
    out.Member("OverwriteInstances", configuration.overwriteInstances);
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
