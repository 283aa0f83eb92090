#include "Export/JsonExporter.h"

#include "Platform/JsonText.h"

#include "Export/VocabularyExporter.h"
#include "Labels/PeerPseudonym.h"
#include "Platform/FaultInjection.h"
#include "Recording/Unobservable.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <iterator>
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

    Json::Value Unobservable(const char* reason)
    {
      Json::Value value;
      value["observable"_key] = false;
      value["reason"_key] = reason;
      return value;
    }

    double MeanMs(uint64_t sumNs, uint64_t count)
    {
      return count == 0 ? 0.0 : Round(static_cast<double>(sumNs) / static_cast<double>(count) / 1e6, 0.001);
    }

    // One part of a phase: its mean over the split instances, its share of their mean duration, and,
    // where kept (a transport since the reset), its quantiles.
    Json::Value ExportPart(uint64_t sumNs, uint64_t count, uint64_t durationNs, const HistogramSnapshot& histogram)
    {
      Json::Value value;
      value["mean"_key] = MeanMs(sumNs, count);
      value["share"_key] =
        durationNs == 0 ? 0.0 : Round(static_cast<double>(sumNs) / static_cast<double>(durationNs), 0.001);
      if (histogram.Count() != 0)
      {
        const double levels[] = {0.5, 0.9, 0.99};
        int64_t values[3];
        histogram.ValuesAtQuantiles(levels, 3, values);
        value["p50"_key] = NanosecondsToMilliseconds(values[0]);
        value["p90"_key] = NanosecondsToMilliseconds(values[1]);
        value["p99"_key] = NanosecondsToMilliseconds(values[2]);
      }
      return value;
    }

    // Where the phase's time went over the instances that had it split (PhasePartsSampling): the
    // three means add up to the mean duration of those instances.
    // quantiles: the parts' quantiles, kept for a transport since the reset; nullptr elsewhere.
    Json::Value ExportParts(const PhasePartsSnapshot& parts, const PhasePartQuantiles* quantiles, const char* reason)
    {
      if (reason != nullptr)
      {
        return Unobservable(reason);
      }
      Json::Value value;
      value["sampled"_key] = Json::UInt64(parts.sampled);
      if (parts.sampled == 0)
      {
        return value;
      }
      value["mean"_key] = MeanMs(parts.durationNs, parts.sampled);
      const PhasePartQuantiles none;
      const PhasePartQuantiles& q = quantiles != nullptr ? *quantiles : none;
      value["onCpu"_key] = ExportPart(parts.cpuNs, parts.sampled, parts.durationNs, q.onCpu);
      const char* noRunDelay = parts.runDelaySampled == 0 ? RunDelayUnobservableReason() : nullptr;
      if (parts.runDelaySampled == 0)
      {
        value["waitingForCpu"_key] =
          Unobservable(noRunDelay != nullptr ? noRunDelay : "the kernel gave no run delay for these instances");
      }
      else
      {
        value["waitingForCpu"_key] = ExportPart(parts.runDelayNs, parts.sampled, parts.durationNs, q.waitingForCpu);
      }
      Json::Value& blocked = value["blocked"_key];
      blocked = ExportPart(parts.BlockedNs(), parts.sampled, parts.durationNs, q.blocked);
      if (parts.runDelaySampled < parts.sampled)
      {
        // The instances without a run delay count their wait for a CPU here.
        blocked["includesWaitingForCpuOf"_key] = Json::UInt64(parts.sampled - parts.runDelaySampled);
      }
      return value;
    }

    double PerSecond(double amount, int64_t spanNs)
    {
      return spanNs <= 0 ? 0.0 : Round(amount * 1e9 / static_cast<double>(spanNs), 0.001);
    }

    Json::Value ExportRate(uint64_t instances, uint64_t bytes, double seconds)
    {
      Json::Value rate;
      rate["instancesPerSecond"_key] = Round(static_cast<double>(instances) / seconds, 0.001);
      rate["megabytesPerSecond"_key] = Round(static_cast<double>(bytes) / 1e6 / seconds, 0.001);
      return rate;
    }

    // includeRates: the per-second windows (transports only). withReasons: unobservable phases as
    // objects with their reason; groups leave them out, the transports above them say why.
    // partQuantiles: the quantiles of the parts of the transport's phases (kPhaseCount), or nullptr.
    Json::Value ExportTransport(const TransportSnapshot& transport, const PluginStatus& status, const Transport* which,
                                bool includeRates = true, bool withReasons = true,
                                const PhasePartQuantiles* partQuantiles = nullptr)
    {
      Json::Value result;

      Json::Value& instances = result["instances"_key];
      for (size_t o = 0; o < kOutcomeCount; o++)
      {
        instances[DefinitionOf(static_cast<Outcome>(o)).name] = Json::UInt64(transport.outcomes[o]);
      }
      Json::Value& reasons = instances["failureReasons"_key];
      for (size_t r = 0; r < kFailureReasonCount; r++)
      {
        reasons[DefinitionOf(static_cast<FailureReason>(r)).name] =
          Json::UInt64(transport.Failures(static_cast<FailureReason>(r)));
      }
      instances["storedWithoutTimeline"_key] = Json::UInt64(transport.Count(Counter::StoredWithoutTimeline));
      instances["transcodeAttempts"_key] = Json::UInt64(transport.Count(Counter::TranscodeAttempts));
      instances["transcodedWithoutHook"_key] = Json::UInt64(transport.Count(Counter::TranscodedWithoutHook));

      const uint64_t stored = transport.outcomes[static_cast<size_t>(Outcome::Stored)];
      const int64_t span = transport.ActiveSpanNs();
      Json::Value& throughput = result["throughput"_key];
      throughput["activeSeconds"_key] = Round(static_cast<double>(span) / 1e9, 0.000001);
      throughput["instancesPerSecond"_key] = PerSecond(static_cast<double>(stored), span);
      throughput["megabytesPerSecond"_key] = PerSecond(static_cast<double>(transport.storedBytes.Sum()) / 1e6, span);
      if (includeRates)
      {
        throughput["last10s"_key] = ExportRate(transport.last10sInstances, transport.last10sBytes, 10);
        throughput["last60s"_key] = ExportRate(transport.last60sInstances, transport.last60sBytes, 60);
      }

      if (which == nullptr || *which == Transport::Rest || *which == Transport::Plugin)
      {
        Json::Value& answers = result["httpAnswers"_key];
        const uint64_t accepting = transport.Count(Counter::AnswersAcceptingCompression);
        answers["requests"_key] = Json::UInt64(accepting + transport.Count(Counter::AnswersWithoutCompression));
        answers["clientAcceptsCompression"_key] = Json::UInt64(accepting);
        const Configuration& configuration = status.configuration;
        const bool compresses = configuration.httpCompressionEnabled && configuration.orthanc.CompressesSmallAnswers();
        answers["compressedByOrthanc"_key] = Json::UInt64(compresses ? accepting : 0);
        answers["HttpCompressionEnabled"_key] = configuration.httpCompressionEnabled;
        // From Orthanc 1.12.2, answers under 2048 bytes are never compressed (null: any size is).
        answers["smallestCompressedBytes"_key] =
          configuration.orthanc.CompressesSmallAnswers() ? Json::Value(Json::nullValue) : Json::Value(2048);
      }

      result["bytesPerInstance"_key]["received"_key] = ExportHistogram(transport.receivedBytes, false);
      result["bytesPerInstance"_key]["stored"_key] = ExportHistogram(transport.storedBytes, false);

      Json::Value& phases = result["phases"_key];
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        const Phase phase = static_cast<Phase>(p);
        const char* reason = PhaseUnobservableReason(status, which, phase);
        if (reason != nullptr && !withReasons)
        {
          continue;
        }
        Json::Value& target = phases[DefinitionOf(phase).name];
        target = (reason != nullptr) ? Unobservable(reason) : ExportHistogram(transport.phases[p], true);
        if (phase == Phase::ChangeDispatch && reason == nullptr)
        {
          target["deliveredBeforeOnStored"_key] = Json::UInt64(transport.Count(Counter::ChangesBeforeStored));
        }
        if (reason == nullptr)
        {
          target["parts"_key] =
            ExportParts(transport.PartsOf(phase), partQuantiles != nullptr ? partQuantiles + p : nullptr,
                        PhasePartsUnobservableReason(status, phase));
        }
      }
      return result;
    }

    Json::Value ExportHook(const HookState& hook)
    {
      Json::Value value;
      value["registered"_key] = hook.registered;
      if (!hook.registered)
      {
        value["reason"_key] = hook.reason;
      }
      return value;
    }

    Json::Value ExportUnobservable(const PluginStatus& status)
    {
      Json::Value list = Json::arrayValue;
      for (const UnobservableStep& step : UnobservableSteps(status))
      {
        Json::Value value;
        value["what"_key] = step.what;
        value["transport"_key] = step.transport;
        value["reason"_key] = step.reason;
        list.append(std::move(value));
      }
      return list;
    }
  }


  namespace
  {
    Json::Value ExportAssociations(const AssociationsView& view, const LabelCatalog& catalog,
                                   const Configuration& configuration)
    {
      Json::Value result;
      result["definition"_key] =
        "one association per TCP connection of Orthanc's DICOM port: a C-STORE instance belongs to the "
        "connection its calling address has open (told apart by connection); when that address has several "
        "open at once, inferred per calling AET as a chain of instances, each received after the previous "
        "one was stored, within DicomScpTimeout (" +
        std::to_string(configuration.dicomScpTimeoutSeconds) +
        " s). Finished when its connection closes (inferred: once idle for longer than DicomScpTimeout, or "
        "no connection from its address is left)";

      Json::Value& open = result["openConnections"_key];
      if (view.connectionsReadNs != 0)
      {
        uint64_t count = 0;
        open["byRemoteIp"_key] = Json::objectValue;
        for (const DicomConnection& connection : view.connections)
        {
          if (connection.closedNs != 0)
          {
            continue;
          }
          count++;
          Json::Value& entry =
            open["byRemoteIp"_key]
                [ExportedAddress(catalog.Name(LabelDimension::RemoteIp, connection.peer), configuration.hashPeers)];
          entry = Json::UInt64(entry.asUInt64() + 1);
        }
        open["count"_key] = Json::UInt64(count);
        open["source"_key] = "Orthanc's own sockets on DicomPort " + std::to_string(configuration.dicomPort) +
                             " (read from its descriptors when an association arrives, and once a second while "
                             "Orthanc ingests): one per open association";
      }
      else
      {
        open["observable"_key] = false;
        open["reason"_key] = "not read yet: no DICOM association arrived since the plugin started, or /proc/self/fd "
                             "cannot be read";
      }

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

      Json::Value& peers = result["byRemoteAet"_key];
      peers = Json::arrayValue;
      for (const PeerAssociations& peer : view.peers)
      {
        Json::Value value;
        value["remoteAet"_key] = ExportedLabelValue(
          LabelDimension::RemoteAet, catalog.Name(LabelDimension::RemoteAet, peer.remoteAet), configuration.hashPeers);
        value["distinctAets"_key] = Json::UInt64(peer.aets);
        value["finished"_key] = Json::UInt64(peer.finished);
        value["inProgress"_key] = Json::UInt64(peer.inProgress);
        value["byConnection"_key] = Json::UInt64(peer.byConnection);
        value["inferred"_key] = Json::UInt64(peer.inferred);
        value["instancesPerAssociation"_key] = ExportHistogram(peer.instancesPerAssociation, false);
        value["durationMs"_key] = ExportHistogram(peer.durationNs, true);
        auto gap = std::find_if(gaps.begin(), gaps.end(), [&peer](const auto& g) { return g.first == peer.remoteAet; });
        value["gap"_key] = ExportHistogram(gap == gaps.end() ? HistogramSnapshot() : gap->second, true);
        peers.append(std::move(value));
      }
      return result;
    }

    Json::Value ExportChanges(const ChangeQueueSnapshot& changes, const TransportSnapshot& all)
    {
      Json::Value result;
      Json::Value& delivered = result["delivered"_key];
      delivered = Json::objectValue;
      for (size_t type = 0; type < kChangeTypeCount; type++)
      {
        if (changes.delivered[type] != 0)
        {
          delivered[ChangeTypeName(static_cast<uint32_t>(type))] = Json::UInt64(changes.delivered[type]);
        }
      }
      if (changes.otherTypes != 0)
      {
        delivered["other"_key] = Json::UInt64(changes.otherTypes);
      }
      result["newInstanceBacklog"_key] = Json::UInt64(changes.NewInstanceBacklog());
      result["storedInstancesSinceStart"_key] = Json::UInt64(changes.storedInstances);
      result["newInstanceChangesSinceStart"_key] = Json::UInt64(changes.newInstancesDelivered);
      Json::Value& lag = result["lagMs"_key];
      lag["newInstance"_key] = ExportHistogram(all.phases[static_cast<size_t>(Phase::ChangeDispatch)], true);
      lag["newInstance"_key]["deliveredBeforeOnStored"_key] = Json::UInt64(all.Count(Counter::ChangesBeforeStored));
      lag["newSeries"_key] = ExportHistogram(changes.newSeriesLag, true);
      lag["newStudy"_key] = ExportHistogram(changes.newStudyLag, true);
      lag["newPatient"_key] = ExportHistogram(changes.newPatientLag, true);
      lag["seriesStudyPatientNotTimed"_key] = Json::UInt64(changes.followedEarlyNewInstance);
      lag["stableSeriesStudyPatient"_key] = Unobservable(
        "Stable* changes come StableAge seconds after the last instance of a resource; which resource an instance "
        "belongs to is not known to the plugin without calling back into Orthanc");
      result["perInstanceWhileBackloggedMs"_key] = ExportHistogram(changes.perInstanceWhileBacklogged, true);
      return result;
    }

    Json::Value ExportPluginCost(const PluginCostSnapshot& cost, const TransportSnapshot& all)
    {
      const auto perInstance = [](uint64_t ns, uint64_t stored) {
        return stored == 0 ? Json::Value(Json::nullValue)
                           : Json::Value(Round(static_cast<double>(ns) / 1000.0 / static_cast<double>(stored), 0.001));
      };
      Json::Value result;
      result["clock"_key] =
        "thread CPU time (CLOCK_THREAD_CPUTIME_ID): a preemption inside a timed call counts nothing";
      Json::Value& each = result["callbacks"_key];
      for (size_t c = 0; c < kCallbackCount; c++)
      {
        each[CallbackName(static_cast<Callback>(c))] = ExportHistogram(cost.callbacks[c], true);
      }
      result["sampling"_key] = "on each thread, one call in " + std::to_string(PluginCost::kSamplingPeriod) +
                               " is timed from entry to return; \"callbacks\" holds the timed calls, their totals are "
                               "their sum times " +
                               std::to_string(PluginCost::kSamplingPeriod) +
                               "; the reading of Orthanc's sockets when an association starts is timed every time "
                               "(\"socketReadings\") and left out of the call that made it";
      result["samplingPeriod"_key] = PluginCost::kSamplingPeriod;
      result["socketReadings"_key] = ExportHistogram(cost.apart, true);
      const uint64_t callbacksNs = cost.CallbacksNs();
      const uint64_t threadNs = static_cast<uint64_t>(std::max<int64_t>(0, cost.watcher.activeCpuNs));
      const uint64_t totalNs = cost.IngestNs();
      const uint64_t stored = all.outcomes[static_cast<size_t>(Outcome::Stored)];
      Json::Value& thread = result["threads"_key]["ingestWatcher"_key];
      thread["running"_key] = cost.watcher.running;
      thread["cpuMs"_key] = NanosecondsToMilliseconds(static_cast<int64_t>(threadNs));
      thread["ticks"_key] = Json::UInt64(cost.watcher.ticks);
      thread["idleCpuMs"_key] = NanosecondsToMilliseconds(cost.watcher.idleCpuNs);
      thread["idleWakes"_key] = Json::UInt64(cost.watcher.idleWakes);
      // The routes' cost, done on this thread so that their answers do not wait: in no figure above.
      thread["answerMemoryReleases"_key] = Json::UInt64(cost.watcher.answerMemoryReleases);
      thread["answerMemoryReleaseCpuMs"_key] = NanosecondsToMilliseconds(cost.watcher.answerMemoryCpuNs);
      result["callbacksMs"_key] = NanosecondsToMilliseconds(static_cast<int64_t>(callbacksNs));
      result["threadsMs"_key] = NanosecondsToMilliseconds(static_cast<int64_t>(threadNs));
      result["totalMs"_key] = NanosecondsToMilliseconds(static_cast<int64_t>(totalNs));
      // While Orthanc is idle the plugin's thread sleeps: what its rare wakes cost, not per instance.
      result["idleCpuMs"_key] = NanosecondsToMilliseconds(cost.watcher.idleCpuNs);
      result["storedInstances"_key] = Json::UInt64(stored);
      result["microsecondsPerStoredInstance"_key] = perInstance(totalNs, stored);
      result["callbacksMicrosecondsPerStoredInstance"_key] = perInstance(callbacksNs, stored);
      result["threadsMicrosecondsPerStoredInstance"_key] = perInstance(threadNs, stored);
      const uint64_t serverTotalNs = all.phases[static_cast<size_t>(Phase::ServerTotal)].Sum();
      result["percentOfServerTotal"_key] =
        serverTotalNs == 0
          ? Json::Value(Json::nullValue)
          : Json::Value(Round(100.0 * static_cast<double>(totalNs) / static_cast<double>(serverTotalNs), 0.0001));
      return result;
    }

    Json::Value ExportStorage(const PluginStatus& status,
                              const std::array<StorageOperationSnapshot, kStorageOperationCount>* operations)
    {
      const Configuration& configuration = status.configuration;
      Json::Value storage;
      storage["timed"_key] = status.storage.active;
      if (!status.storage.active)
      {
        storage["reason"_key] = status.storage.reason;
      }
      storage["root"_key] = status.storage.root.empty() ? Json::Value() : Json::Value(status.storage.root);
      storage["SyncStorageArea"_key] = configuration.syncStorageArea;
      storage["StoreDicom"_key] = configuration.storeDicom;
      storage["StorageCompression"_key] = configuration.storageCompression;
      if (status.storage.active && operations != nullptr)
      {
        for (size_t i = 0; i < kStorageOperationCount; i++)
        {
          const StorageOperationSnapshot& operation = (*operations)[i];
          Json::Value value = ExportHistogram(operation.durations, true);
          value["bytes"_key] = Json::UInt64(operation.bytes);
          value["failures"_key] = Json::UInt64(operation.failures);
          const uint64_t busyNs = operation.durations.Sum();
          value["megabytesPerSecond"_key] =
            busyNs == 0 ? 0.0 : Round(static_cast<double>(operation.bytes) * 1e3 / static_cast<double>(busyNs), 0.001);
          storage["operations"_key][StorageOperationName(static_cast<StorageOperation>(i))] = value;
        }
      }
      return storage;
    }

    Json::Value ExportLabels(const LabelCatalog& catalog, const StreamInfo& info, bool hashPeers)
    {
      Json::Value labels;
      for (size_t d = 0; d < kLabelDimensions; d++)
      {
        const LabelDimension dimension = static_cast<LabelDimension>(d);
        const LabelDictionary* dictionary = catalog.DictionaryOf(dimension);
        if (dictionary == nullptr)
        {
          continue;
        }
        Json::Value& target = labels[LabelDimensionName(dimension)];
        target["capacity"_key] = Json::UInt64(dictionary->Capacity());
        target["overflowed"_key] = Json::UInt64(dictionary->Overflowed());
        target["contended"_key] = Json::UInt64(dictionary->Contended());
        target["withheld"_key] = Json::UInt64(dictionary->Withheld());
        target["values"_key] = Json::arrayValue;
        for (size_t i = 0; i < dictionary->Capacity(); i++)
        {
          const LabelId id = static_cast<LabelId>(kFirstValueLabel + i);
          const std::string name = dictionary->Name(id);
          if (name != "(other)")
          {
            target["values"_key].append(ExportedLabelValue(dimension, name, hashPeers));
          }
        }
      }
      Json::Value& streams = labels["streams"_key];
      streams["capacity"_key] = Json::UInt64(info.capacity);
      streams["used"_key] = Json::UInt64(info.used);
      streams["overflowed"_key] = Json::UInt64(info.overflowed);
      streams["bytesEach"_key] = Json::UInt64(info.bytesEach);
      labels["series"_key] = streams;  // its former name, for one release (NEWS)
      return labels;
    }

    void ExportSlotsView(Json::Value& result, const IngestReport& input, const StatsQuery& filter)
    {
      const LabelCatalog& catalog = *input.catalog;
      const GroupedSnapshot& grouped = input.grouped;
      const bool hashPeers = input.status->configuration.hashPeers;

      Json::Value& query = result["query"_key];
      query["filters"_key] = Json::objectValue;
      if (filter.scope == StatsQuery::Scope::Single)
      {
        query["filters"_key]["transport"_key] = TransportName(filter.transport);
      }
      for (const auto& label : filter.labels)
      {
        // A value seen is echoed as its pseudonym; a pseudonym as given (not hashed twice).
        LabelId seen;
        const bool asGiven =
          hashPeers && IsPseudonym(label.first, label.second) && !catalog.Find(label.first, label.second, seen);
        query["filters"_key][LabelDimensionName(label.first)] =
          asGiven ? label.second : ExportedLabelValue(label.first, label.second, hashPeers);
      }
      query["groupBy"_key] = filter.hasGroupBy ? Json::Value(LabelDimensionName(filter.groupBy)) : Json::Value();
      query["streamsMatched"_key] = Json::UInt64(grouped.streamsMatched);
      query["seriesMatched"_key] = query["streamsMatched"_key];  // its former name, for one release (NEWS)
      const std::array<TransportSnapshot, kTransportCount>& perTransport = grouped.transports;
      std::vector<std::pair<LabelId, TransportSnapshot>> groups = grouped.groups;

      Json::Value& transports = result["transports"_key];
      transports = Json::objectValue;
      TransportSnapshot all;
      for (size_t t = 0; t < kTransportCount; t++)
      {
        const Transport transport = static_cast<Transport>(t);
        all.Merge(perTransport[t]);
        if (filter.ListsTransport(transport))
        {
          transports[TransportName(transport)] = ExportTransport(perTransport[t], *input.status, &transport, false);
        }
      }
      if (filter.scope != StatsQuery::Scope::Single)
      {
        transports["all"_key] = ExportTransport(all, *input.status, nullptr, false);
      }

      if (filter.hasGroupBy)
      {
        std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
          return a.second.outcomes[static_cast<size_t>(Outcome::Stored)] >
                 b.second.outcomes[static_cast<size_t>(Outcome::Stored)];
        });
        Json::Value& list = result["groups"_key];
        list = Json::arrayValue;
        for (const auto& group : groups)
        {
          const bool isTransport = filter.groupBy == LabelDimension::Transport;
          const Transport transport = static_cast<Transport>(group.first - kFirstValueLabel);
          Json::Value value =
            ExportTransport(group.second, *input.status, isTransport ? &transport : nullptr, false, false);
          value["labels"_key][LabelDimensionName(filter.groupBy)] =
            ExportedLabelValue(filter.groupBy, catalog.Name(filter.groupBy, group.first), hashPeers);
          list.append(std::move(value));
        }
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


  Json::Value ExportInstanceParts(const InstanceMeasurement& measurement, Phase phase)
  {
    if (!measurement.HasParts(phase))
    {
      return Json::nullValue;
    }
    Json::Value parts;
    parts["onCpu"_key] = NanosecondsToMilliseconds(measurement.CpuNs(phase));
    if (measurement.RunDelayNs(phase) != InstanceMeasurement::kNotMeasured)
    {
      parts["waitingForCpu"_key] = NanosecondsToMilliseconds(measurement.RunDelayNs(phase));
    }
    parts["blocked"_key] = NanosecondsToMilliseconds(measurement.BlockedNs(phase));
    return parts;
  }


  namespace
  {
    // The members of every histogram, as ExportHistogram fills them.
    enum HistogramMember
    {
      kCountMember,
      kSumMember,
      kMeanMember,
      kMinMember,
      kP50Member,
      kP90Member,
      kP99Member,
      kP999Member,
      kMaxMember,
      kHistogramMembers
    };

    // A histogram's object with every member null, and which member each of its positions holds (in
    // the order jsoncpp keeps them). An answer with every table full holds about a thousand
    // histograms: each is a copy of this one, filled through its iterator, without a key compared
    // or an object rebalanced.
    struct HistogramPrototype
    {
      Json::Value value;
      HistogramMember memberAt[kHistogramMembers];

      HistogramPrototype()
      {
        static_assert(sizeof(kQuantiles) / sizeof(kQuantiles[0]) == kMaxMember - kP50Member, "one member per quantile");
        const char* names[kHistogramMembers] = {
          "count", "sum", "mean", "min", kQuantiles[0].name, kQuantiles[1].name, kQuantiles[2].name, kQuantiles[3].name,
          "max"};
        for (const char* name : names)
        {
          value[Json::StaticString(name)] = Json::nullValue;
        }
        size_t position = 0;
        for (Json::Value::const_iterator member = value.begin(); member != value.end(); ++member, ++position)
        {
          const char* end = nullptr;
          const std::string name(member.memberName(&end));
          memberAt[position] = static_cast<HistogramMember>(
            std::find_if(std::begin(names), std::end(names), [&name](const char* n) { return name == n; }) - names);
        }
      }
    };

    const HistogramPrototype& TheHistogramPrototype()
    {
      static const HistogramPrototype prototype;
      return prototype;
    }
  }


  Json::Value ExportHistogram(const HistogramSnapshot& histogram, bool durations)
  {
    const HistogramPrototype& prototype = TheHistogramPrototype();
    Json::Value value(prototype.value);
    Json::Value members[kHistogramMembers];
    members[kCountMember] = Json::UInt64(histogram.Count());
    if (histogram.Count() != 0)
    {
      auto convert = [durations](double v) -> Json::Value {
        return durations ? Json::Value(NanosecondsToMilliseconds(static_cast<int64_t>(std::llround(v))))
                         : Json::Value(Json::Int64(std::llround(v)));
      };
      members[kSumMember] = durations ? Json::Value(NanosecondsToMilliseconds(static_cast<int64_t>(histogram.Sum())))
                                      : Json::Value(Json::UInt64(histogram.Sum()));
      members[kMeanMember] = durations ? Json::Value(NanosecondsToMilliseconds(std::llround(histogram.Mean())))
                                       : Json::Value(Round(histogram.Mean(), 1));
      members[kMinMember] = convert(static_cast<double>(histogram.Min()));
      constexpr size_t kCount = kMaxMember - kP50Member;
      double levels[kCount];
      int64_t values[kCount];
      for (size_t i = 0; i < kCount; i++)
      {
        levels[i] = kQuantiles[i].q;
      }
      histogram.ValuesAtQuantiles(levels, kCount, values);
      for (size_t i = 0; i < kCount; i++)
      {
        members[kP50Member + i] = convert(static_cast<double>(values[i]));
      }
      members[kMaxMember] = convert(static_cast<double>(histogram.Max()));
    }
    size_t position = 0;
    for (Json::Value::iterator member = value.begin(); member != value.end(); ++member, ++position)
    {
      member->swap(members[prototype.memberAt[position]]);
    }
    if (histogram.Saturated() != 0)
    {
      value["saturated"_key] = Json::UInt64(histogram.Saturated());
    }
    return value;
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
    Json::Value ExportNotInEffect(const PluginStatus& status)
    {
      Json::Value list = Json::arrayValue;
      auto add = [&](const std::string& option, const std::string& reason) {
        Json::Value item;
        item["option"_key] = option;
        item["reason"_key] = reason;
        list.append(std::move(item));
      };
      const Configuration& configuration = status.configuration;
      for (const UnknownOption& unknown : configuration.unknownOptions)
      {
        add(std::string(kConfigurationSection) + "." + unknown.key, unknown.Message() + ": ignored");
      }
      if (status.state == PluginState::Inert)
      {
        add(kConfigurationSection, status.stateReason);
        return list;
      }
      if (status.state == PluginState::Disabled)
      {
        return list;  // said by "state": nothing was asked for
      }
      if (configuration.timedStorage && !status.storage.active)
      {
        add("IngestPerf.TimedStorage", status.storage.reason);
      }
      if (configuration.timeRestAnswers && !status.restAnswers.active)
      {
        add("IngestPerf.TimeRestAnswers", status.restAnswers.reason);
      }
      if (configuration.transcodeTiming != TranscodeTiming::Off && !status.hooks.transcoder.registered)
      {
        add("IngestPerf.TranscodeTiming", status.hooks.transcoder.reason);
      }
      if (configuration.receivedInstanceCallback && !status.hooks.receivedInstance.registered)
      {
        add("IngestPerf.ReceivedInstanceCallback", status.hooks.receivedInstance.reason);
      }
      if (configuration.dicomTcpNoDelay && !status.dicomTcpNoDelay.inEffect)
      {
        add("IngestPerf.DicomTcpNoDelay", status.dicomTcpNoDelay.detail);
      }
      return list;
    }
  }


  namespace
  {
    double Seconds(int64_t ns)
    {
      return Round(static_cast<double>(ns) / 1e9, 0.001);
    }

    Json::Value ExportWindowInfo(Window window, const WindowSnapshot& snapshot)
    {
      Json::Value info;
      info["name"_key] = WindowName(window);
      info["seconds"_key] = Seconds(snapshot.coveredNs);
      info["slotSeconds"_key] = Seconds(snapshot.slotNs);
      info["fullSlots"_key] = snapshot.fullSlots;
      info["droppedAtRotation"_key] = Json::UInt64(snapshot.droppedAtRotation);
      info["straddledRotation"_key] = Json::UInt64(snapshot.straddledRotation);
      return info;
    }

    // A transport over a window: as since the reset, but the throughput is over the window's
    // covered seconds (no active span, no per-second rates).
    Json::Value ExportWindowTransport(const TransportSnapshot& transport, const PluginStatus& status,
                                      const Transport* which, int64_t coveredNs)
    {
      Json::Value result = ExportTransport(transport, status, which, false);
      const uint64_t stored = transport.outcomes[static_cast<size_t>(Outcome::Stored)];
      Json::Value throughput;
      throughput["seconds"_key] = Seconds(coveredNs);
      throughput["instancesPerSecond"_key] = PerSecond(static_cast<double>(stored), coveredNs);
      throughput["megabytesPerSecond"_key] =
        PerSecond(static_cast<double>(transport.storedBytes.Sum()) / 1e6, coveredNs);
      result["throughput"_key] = throughput;
      return result;
    }

    Json::Value ExportRecentOne(const TransportSnapshot& transport, int64_t coveredNs)
    {
      Json::Value value;
      const uint64_t stored = transport.outcomes[static_cast<size_t>(Outcome::Stored)];
      const HistogramSnapshot& total = transport.phases[static_cast<size_t>(Phase::ServerTotal)];
      value["seconds"_key] = Seconds(coveredNs);
      value["stored"_key] = Json::UInt64(stored);
      value["instancesPerSecond"_key] = PerSecond(static_cast<double>(stored), coveredNs);
      for (const Quantile& quantile : {kQuantiles[0], kQuantiles[2]})
      {
        value["serverTotalMs"_key][quantile.name] =
          total.Count() == 0 ? Json::Value(Json::nullValue)
                             : Json::Value(NanosecondsToMilliseconds(total.ValueAtQuantile(quantile.q)));
      }
      return value;
    }

    // The last minute and five minutes of each transport of the answer, in short.
    Json::Value ExportRecent(const std::array<WindowSnapshot, 2>& recent, const StatsQuery& filter)
    {
      Json::Value result = Json::objectValue;
      const Window windows[2] = {Window::OneMinute, Window::FiveMinutes};
      for (size_t w = 0; w < 2; w++)
      {
        TransportSnapshot all;
        for (size_t t = 0; t < kTransportCount; t++)
        {
          const Transport transport = static_cast<Transport>(t);
          all.Merge(recent[w].transports[t]);
          if (filter.ListsTransport(transport))
          {
            result[TransportName(transport)][WindowName(windows[w])] =
              ExportRecentOne(recent[w].transports[t], recent[w].coveredNs);
          }
        }
        if (filter.scope != StatsQuery::Scope::Single)
        {
          result["all"_key][WindowName(windows[w])] = ExportRecentOne(all, recent[w].coveredNs);
        }
      }
      return result;
    }
  }


#ifdef INGEST_PERF_FAULT_INJECTION
  namespace
  {
    // The test build only: what was injected, to compare with what the plugin counted.
    Json::Value ExportFaultInjection()
    {
      const FaultInjection::Settings& settings = FaultInjection::Current();
      const FaultInjection::Counts injected = FaultInjection::Injected();
      Json::Value result;
      result["sdkProbability"_key] = settings.sdk;
      result["allocProbability"_key] = settings.alloc;
      result["seed"_key] = Json::UInt64(settings.seed);
      result["sdkCallsInjected"_key] = Json::UInt64(injected.sdkCalls);
      result["allocationsInjected"_key] = Json::UInt64(injected.allocations);
      return result;
    }
  }


#endif
  Json::Value ExportStats(const IngestReport& input, const StatsQuery& filter)
  {
    const StatsSnapshot& snapshot = input.snapshot;
    const PluginStatus& status = *input.status;
    Json::Value result;

    result["plugin"_key] = "ingest-perf";
    result["version"_key] = status.pluginVersion;
    result["orthancVersion"_key] = status.orthancVersion;
    // What the plugin does, before any figure: a disabled or inert plugin has nothing to show.
    result["state"_key] = PluginStateName(status.state);
    result["reason"_key] = status.stateReason;
    result["enabled"_key] = status.Running();
    result["notInEffect"_key] = ExportNotInEffect(status);
    result["units"_key]["durations"_key] = "milliseconds";
    result["units"_key]["sizes"_key] = "bytes";
    result["units"_key]["megabyte"_key] = "1,000,000 bytes";
    result["since"_key] = IsoUtc(snapshot.resetWallNs);
    result["elapsedSeconds"_key] = Round(static_cast<double>(snapshot.takenNs - snapshot.resetNs) / 1e9, 0.001);
    result["sinceReset"_key] = ExportSinceReset(snapshot.History());

    const Configuration& configuration = status.configuration;
    Json::Value& effective = result["configuration"_key];
    effective["Enable"_key] = configuration.enable;
    effective["ReceivedInstanceCallback"_key] = configuration.receivedInstanceCallback;
    effective["MaxThreads"_key] = Json::UInt64(configuration.maxThreads);
    effective["ChangeTableSize"_key] = Json::UInt64(configuration.changeTableSize);
    effective["MaxPeers"_key] = Json::UInt64(configuration.maxPeers);
    effective["MaxLabelValues"_key] = Json::UInt64(configuration.maxLabelValues);
    effective["MaxStreams"_key] = Json::UInt64(configuration.maxStreams);
    effective["RecentInstances"_key] = Json::UInt64(configuration.recentInstances);
    effective["TranscodeTiming"_key] = TranscodeTimingName(configuration.transcodeTiming);
    effective["TimedStorage"_key] = configuration.timedStorage;
    effective["TimeRestAnswers"_key] = configuration.timeRestAnswers;
    effective["HashPeers"_key] = configuration.hashPeers;
    effective["DicomTcpNoDelay"_key] = configuration.dicomTcpNoDelay;
    effective["PhasePartsSampling"_key] = configuration.phasePartsSampling;
    Json::Value& orthanc = result["orthancOptions"_key];
    orthanc["OverwriteInstances"_key] = configuration.overwriteInstances;
    orthanc["DicomScpTimeout"_key] = configuration.dicomScpTimeoutSeconds;
    orthanc["IngestTranscoding"_key] = configuration.ingestTranscoding
                                         ? Json::Value(configuration.ingestTranscodingSyntax)
                                         : Json::Value(Json::nullValue);
    Json::Value& noDelay = result["dicomTcpNoDelay"_key];
    noDelay["configured"_key] = status.dicomTcpNoDelay.configured;
    noDelay["inEffect"_key] = status.dicomTcpNoDelay.inEffect;
    noDelay["source"_key] = status.dicomTcpNoDelay.source;
    noDelay["detail"_key] = status.dicomTcpNoDelay.detail;

    Json::Value& hooks = result["hooks"_key];
    hooks["httpRequestFilter"_key] = ExportHook(status.hooks.httpRequestFilter);
    hooks["receivedInstance"_key] = ExportHook(status.hooks.receivedInstance);
    hooks["transcoder"_key] = ExportHook(status.hooks.transcoder);
    hooks["instanceFilter"_key] = ExportHook(status.hooks.instanceFilter);
    hooks["cstoreFilter"_key] = ExportHook(status.hooks.cstoreFilter);
    hooks["storedInstance"_key] = ExportHook(status.hooks.storedInstance);
    hooks["change"_key] = ExportHook(status.hooks.change);

    // The records are read after the statistics: one opened in between is 0 ms old.
    const auto ageMs = [&](int64_t startNs) {
      return startNs == 0 ? 0.0 : NanosecondsToMilliseconds(std::max<int64_t>(0, snapshot.takenNs - startNs));
    };
    Json::Value& open = result["openRecords"_key];
    open["count"_key] = Json::UInt64(input.openRecords.count);
    open["oldestAgeMs"_key] = ageMs(input.openRecords.oldestStartNs);
    open["receiving"_key]["count"_key] = Json::UInt64(input.openRecords.receivingCount);
    open["receiving"_key]["oldestAgeMs"_key] = ageMs(input.openRecords.receivingOldestStartNs);
    open["startedBeforeReset"_key] = Json::UInt64(input.openRecords.startedBeforeReset);
    open["threadsTracked"_key] = Json::UInt64(input.openRecords.threadsTracked);
    open["threadsUntracked"_key] = Json::UInt64(input.openRecords.threadsUntracked);

    INGEST_PERF_INJECT_ALLOCATION_FAULT();
    Json::Value& errors = result["errors"_key];
    errors["callbackExceptions"_key] = Json::UInt64(snapshot.callbackErrors);
    errors["changeCorrelationSkipped"_key] = Json::UInt64(input.correlationSkipped);
    errors["associationTrackingSkipped"_key] = Json::UInt64(input.associationSkipped);
    errors["sdkCallsFailed"_key] = Json::UInt64(snapshot.sdkCallsFailed);
    errors["concludedTooEarly"_key] = Json::UInt64(snapshot.concludedEarly);
    errors["changeTableEvictions"_key] = Json::UInt64(input.correlationEvicted);
    errors["failedAnswers"_key] = Json::UInt64(input.failedAnswers);
#ifdef INGEST_PERF_FAULT_INJECTION
    result["faultInjection"_key] = ExportFaultInjection();
#endif

    INGEST_PERF_INJECT_ALLOCATION_FAULT();
    if (input.catalog != nullptr)
    {
      result["labels"_key] = ExportLabels(*input.catalog, input.streams, status.configuration.hashPeers);
    }
    result["storage"_key] = ExportStorage(status, input.collected ? &input.storage : nullptr);
    if (input.collected && input.catalog != nullptr)
    {
      result["associations"_key] = ExportAssociations(input.associations, *input.catalog, status.configuration);
    }
    // Every transport since the reset, merged once (its histograms: a few hundred buckets per phase).
    const TransportSnapshot sinceReset = snapshot.AllTransports();
    if (input.collected)
    {
      result["changes"_key] = ExportChanges(input.changes, sinceReset);
      result["pluginCost"_key] = ExportPluginCost(input.pluginCost, sinceReset);
    }

    if (filter.UsesStreams() && input.catalog != nullptr && input.collected)
    {
      ExportSlotsView(result, input, filter);
      result["unobservable"_key] = ExportUnobservable(*input.status);
      result["definitions"_key] = ExportDefinitions();
      return result;
    }

    INGEST_PERF_INJECT_ALLOCATION_FAULT();
    const bool windowed = filter.hasWindow && input.collected && input.windowsKept;
    if (windowed)
    {
      result["window"_key] = ExportWindowInfo(filter.window, input.window);
    }
    Json::Value& transports = result["transports"_key];
    transports = Json::objectValue;
    const auto exportOne = [&](const TransportSnapshot& transport, const Transport* which) {
      return windowed ? ExportWindowTransport(transport, status, which, input.window.coveredNs)
                      : ExportTransport(transport, status, which, true, true,
                                        which != nullptr ? snapshot.PartQuantilesOf(*which) : nullptr);
    };
    const std::array<TransportSnapshot, kTransportCount>& source =
      windowed ? input.window.transports : snapshot.transports;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      const Transport transport = static_cast<Transport>(t);
      if (filter.ListsTransport(transport))
      {
        transports[TransportName(transport)] = exportOne(source[t], &transport);
      }
    }
    if (filter.scope != StatsQuery::Scope::Single)
    {
      transports["all"_key] = exportOne(windowed ? MergeTransports(source) : sinceReset, nullptr);
    }
    if (!windowed && input.collected && input.windowsKept)
    {
      result["recent"_key] = ExportRecent(input.recent, filter);
    }

    result["unobservable"_key] = ExportUnobservable(*input.status);
    result["definitions"_key] = ExportDefinitions();
    return result;
  }
}
