#include "Export/StatsTablesExporter.h"

#include "Export/JsonFigures.h"
#include "Labels/PeerPseudonym.h"
#include "Recording/Unobservable.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

namespace IngestPerf
{
  void WriteAssociations(JsonWriter& out, const AssociationsView& view, const LabelCatalog& catalog,
                         const Configuration& configuration)
  {
    out.BeginObject();
    out.Member("definition",
               "one association per TCP connection of Orthanc's DICOM port: a C-STORE instance belongs to the "
               "connection its calling address has open (told apart by connection); when that address has several "
               "open at once, inferred per calling AET as a chain of instances, each received after the previous "
               "one was stored, within DicomScpTimeout (" +
                 std::to_string(configuration.dicomScpTimeoutSeconds) +
                 " s). Finished when its connection closes (inferred: once idle for longer than DicomScpTimeout, "
                 "or no connection from its address is left)");

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
                  : out.Real(RoundTo(static_cast<double>(ns) / 1000.0 / static_cast<double>(stored), 0.001));
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
      : out.Real(RoundTo(100.0 * static_cast<double>(totalNs) / static_cast<double>(serverTotalNs), 0.0001));
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
          busyNs == 0 ? 0.0 : RoundTo(static_cast<double>(operation.bytes) * 1e3 / static_cast<double>(busyNs), 0.001));
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
    const bool registered =
      later.Filter() == LaterPluginsHooks::State::Registered && later.Stored() == LaterPluginsHooks::State::Registered;
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
}
