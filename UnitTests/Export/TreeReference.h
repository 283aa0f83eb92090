// The answers of /perf/slowest, /perf/trace and /perf/slots as the plugin built them before they
// were written straight into their text: a Json::Value tree each (the exporters' code of that
// version, unchanged but for `inline`), which the route then wrote with WriteJsonText. The tests
// hold the new text to these: the same document, member for member, value for value.
#pragma once

#include "Export/JsonExporter.h"
#include "Labels/PeerPseudonym.h"
#include "Metrics/StatsQuery.h"
#include "Platform/JsonText.h"
#include "Recording/IngestReport.h"

#include <json/value.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace IngestPerf
{
  namespace TreeReference
  {

    inline Json::Value ExportInstanceParts(const InstanceMeasurement& measurement, Phase phase)
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

    inline Json::Value ExportRecentInstance(const RecentInstance& instance, const LabelCatalog& catalog, bool hashPeers)
    {
      Json::Value value;
      value["instanceId"_key] = instance.instanceId;
      value["arrival"_key] = IsoUtc(instance.startWallNs);
      value["thread"_key] = Json::UInt(instance.thread);
      value["transport"_key] = TransportName(instance.labels.GetTransport());
      value["outcome"_key] = DefinitionOf(instance.outcome).name;
      value["storedBytes"_key] = Json::UInt64(instance.measurement.storedBytes);
      Json::Value& phases = value["phases"_key];
      phases = Json::objectValue;
      Json::Value parts = Json::objectValue;
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        const Phase phase = static_cast<Phase>(p);
        const int64_t ns = instance.measurement.phaseNs[p];
        if (ns != InstanceMeasurement::kNotMeasured)
        {
          phases[DefinitionOf(phase).name] = NanosecondsToMilliseconds(ns);
          if (instance.measurement.HasParts(phase))
          {
            parts[DefinitionOf(phase).name] = ExportInstanceParts(instance.measurement, phase);
          }
        }
      }
      // Where each phase's time went, for an instance whose phases were split (PhasePartsSampling).
      value["parts"_key] = std::move(parts);
      Json::Value& labels = value["labels"_key];
      for (size_t d = 0; d < kLabelDimensions; d++)
      {
        const LabelDimension dimension = static_cast<LabelDimension>(d);
        if (dimension != LabelDimension::Transport)
        {
          labels[LabelDimensionName(dimension)] =
            ExportedLabelValue(dimension, catalog.Name(dimension, instance.labels.Get(dimension)), hashPeers);
        }
      }
      return value;
    }


    inline Json::Value ExportRing(const RecentReport& report)
    {
      Json::Value ring;
      ring["capacity"_key] = Json::UInt64(report.ring.capacity);
      ring["held"_key] = Json::UInt64(report.ring.held);
      ring["pushed"_key] = Json::UInt64(report.ring.pushed);
      ring["skipped"_key] = Json::UInt64(report.ring.skipped);
      if (report.ring.oldestStoredNs != 0)
      {
        const int64_t back = report.nowNs - report.ring.oldestStoredNs;
        ring["oldest"_key] = IsoUtc(report.nowWallNs - back);
        ring["reachesBackSeconds"_key] = std::round(static_cast<double>(back) / 1e6) / 1e3;
      }
      else
      {
        ring["oldest"_key] = Json::nullValue;
        ring["reachesBackSeconds"_key] = 0.0;
      }
      return ring;
    }


    inline Json::Value ExportSlowest(const RecentReport& report, const RecentQuery& query, bool hashPeers)
    {
      Json::Value result;
      result["phase"_key] = DefinitionOf(query.phase).name;
      result["n"_key] = Json::UInt64(query.count);
      result["window"_key] = query.window;
      result["windowSeconds"_key] = Json::Int64(query.windowSeconds);
      result["units"_key] = "ms";
      result["ring"_key] = ExportRing(report);
      // Whether the window was seen whole: nothing was overwritten since the reset, or what was is older.
      result["ring"_key]["coversWindow"_key] =
        report.ring.pushed <= report.ring.capacity ||
        (report.ring.oldestStoredNs != 0 &&
         report.nowNs - report.ring.oldestStoredNs >= query.windowSeconds * 1000000000);
      result["matched"_key] = Json::UInt64(report.matched);
      Json::Value& instances = result["instances"_key];
      instances = Json::arrayValue;
      if (report.catalog != nullptr)
      {
        for (const RecentInstance& instance : report.ring.instances)
        {
          instances.append(ExportRecentInstance(instance, *report.catalog, hashPeers));
        }
      }
      return result;
    }

    namespace TraceDetail
    {
      inline constexpr int kThreadsProcess = 1;
      inline constexpr int kAssociationsProcess = 2;

      struct Event
      {
        int pid;
        int64_t tid;
        int64_t startNs;
        int64_t durationNs;
        Json::Value value;
      };

      class TraceBuilder
      {
      public:
        explicit TraceBuilder(int64_t originNs) :
          originNs_(originNs)
        {
        }

        double Microseconds(int64_t ns) const { return static_cast<double>(ns) / 1000.0; }

        void Slice(int pid, int64_t tid, const char* category, const std::string& name, int64_t startNs,
                   int64_t durationNs, Json::Value args = Json::nullValue)
        {
          Json::Value event;
          event["name"_key] = name;
          event["cat"_key] = category;
          event["ph"_key] = "X";
          event["ts"_key] = Microseconds(startNs - originNs_);
          event["dur"_key] = Microseconds(durationNs);
          event["pid"_key] = pid;
          event["tid"_key] = Json::Int64(tid);
          if (!args.isNull())
          {
            event["args"_key] = std::move(args);
          }
          events_.push_back(Event{pid, tid, startNs, durationNs, std::move(event)});
        }

        void Counter(int64_t atNs, const char* name, const char* series, uint64_t value)
        {
          Json::Value event;
          event["name"_key] = name;
          event["ph"_key] = "C";
          event["ts"_key] = Microseconds(atNs - originNs_);
          event["pid"_key] = kThreadsProcess;
          event["tid"_key] = 0;
          event["args"_key][series] = Json::UInt64(value);
          events_.push_back(Event{kThreadsProcess, 0, atNs, 0, std::move(event)});
        }

        void Name(int pid, int64_t tid, const char* kind, const std::string& name)
        {
          Json::Value event;
          event["name"_key] = kind;
          event["ph"_key] = "M";
          event["pid"_key] = pid;
          event["tid"_key] = Json::Int64(tid);
          event["args"_key]["name"_key] = name;
          metadata_.append(std::move(event));
        }

        Json::Value Events()
        {
          // Per track in time order, an enclosing slice before the slices it encloses; the order of
          // addition between equals (an index sort: 4 bytes per event, no second copy of the events).
          std::vector<uint32_t> order(events_.size());
          for (size_t i = 0; i < order.size(); i++)
          {
            order[i] = static_cast<uint32_t>(i);
          }
          std::sort(order.begin(), order.end(), [this](uint32_t x, uint32_t y) {
            const Event& a = events_[x];
            const Event& b = events_[y];
            return std::make_tuple(a.pid, a.tid, a.startNs, -a.durationNs, x) <
                   std::make_tuple(b.pid, b.tid, b.startNs, -b.durationNs, y);
          });
          Json::Value all = metadata_;
          for (uint32_t index : order)
          {
            all.append(std::move(events_[index].value));
          }
          return all;
        }

      private:
        int64_t originNs_;
        Json::Value metadata_ = Json::arrayValue;
        // A deque: tens of thousands of events in small blocks, never one large block that glibc,
        // once freed, would answer by keeping more of every arena (Platform/MappedText explains).
        std::deque<Event> events_;
      };

      inline int64_t EarliestNs(const RecentInstance& instance)
      {
        const InstanceMeasurement& measurement = instance.measurement;
        int64_t earliest = measurement.startNs;
        if (measurement.Phase(Phase::AssociationGap) != InstanceMeasurement::kNotMeasured)
        {
          earliest = std::min(earliest, measurement.PhaseStart(Phase::AssociationGap));
        }
        return earliest;
      }

      inline void AddInstance(TraceBuilder& trace, const RecentInstance& instance, const Json::Value& args)
      {
        const InstanceMeasurement& measurement = instance.measurement;
        const std::string name = std::string(TransportName(instance.labels.GetTransport())) + " instance";
        Json::Value instanceArgs = args;
        if (measurement.HasParts(Phase::ServerTotal))
        {
          instanceArgs["parts"_key] = ExportInstanceParts(measurement, Phase::ServerTotal);
        }
        trace.Slice(kThreadsProcess, instance.thread, "instance", name, measurement.startNs,
                    measurement.storedNs - measurement.startNs, std::move(instanceArgs));
        // Inside the instance's slice, the phases the vocabulary places inside it, each within its
        // parent (receive, preStore > transcode, persist > storagePrepare, storageWrite, indexUpdate),
        // with their parts (ms) as args when the instance's phases were split.
        for (size_t p = 0; p < kPhaseCount; p++)
        {
          const Phase phase = static_cast<Phase>(p);
          if (DefinitionOf(phase).place == PhasePlace::Inside &&
              measurement.Phase(phase) != InstanceMeasurement::kNotMeasured)
          {
            trace.Slice(kThreadsProcess, instance.thread, "phase", DefinitionOf(phase).name,
                        measurement.PhaseStart(phase), measurement.Phase(phase),
                        ExportInstanceParts(measurement, phase));
          }
        }
        // Before it on the same thread, the time since the previous request of its HTTP connection.
        if (measurement.Phase(Phase::RequestGap) != InstanceMeasurement::kNotMeasured)
        {
          trace.Slice(kThreadsProcess, instance.thread, "requestGap", "requestGap",
                      measurement.PhaseStart(Phase::RequestGap), measurement.Phase(Phase::RequestGap),
                      ExportInstanceParts(measurement, Phase::RequestGap));
        }
      }

      // The C-STORE instances of each calling AET, laid out on tracks that never overlap themselves:
      // one track per chain of instances that followed each other, as an association sends them.
      inline void AddAssociations(TraceBuilder& trace, const RecentInstanceList& instances, const LabelCatalog& catalog,
                                  bool hashPeers)
      {
        std::map<LabelId, std::vector<const RecentInstance*>> byPeer;
        for (const RecentInstance& instance : instances)
        {
          if (instance.labels.GetTransport() == Transport::Dicom)
          {
            byPeer[instance.labels.Get(LabelDimension::RemoteAet)].push_back(&instance);
          }
        }
        int64_t nextTrack = 1;
        for (auto& peer : byPeer)
        {
          const std::string aet = ExportedLabelValue(LabelDimension::RemoteAet,
                                                     catalog.Name(LabelDimension::RemoteAet, peer.first), hashPeers);
          std::vector<const RecentInstance*>& chain = peer.second;
          std::sort(chain.begin(), chain.end(),
                    [](const RecentInstance* a, const RecentInstance* b) { return EarliestNs(*a) < EarliestNs(*b); });
          std::vector<std::pair<int64_t, int64_t>> tracks;  // track id, end of its last slice
          for (const RecentInstance* instance : chain)
          {
            const int64_t begin = EarliestNs(*instance);
            auto track = std::find_if(tracks.begin(), tracks.end(),
                                      [begin](const std::pair<int64_t, int64_t>& t) { return t.second <= begin; });
            if (track == tracks.end())
            {
              tracks.emplace_back(nextTrack, 0);
              trace.Name(kAssociationsProcess, nextTrack, "thread_name",
                         "C-STORE from " + aet + " #" + std::to_string(tracks.size()));
              nextTrack++;
              track = tracks.end() - 1;
            }
            track->second = instance->measurement.storedNs;
            const InstanceMeasurement& measurement = instance->measurement;
            Json::Value args;
            args["instanceId"_key] = instance->instanceId;
            args["remoteAet"_key] = aet;
            if (measurement.Phase(Phase::AssociationGap) != InstanceMeasurement::kNotMeasured)
            {
              Json::Value gapArgs = args;
              if (measurement.HasParts(Phase::AssociationGap))
              {
                gapArgs["parts"_key] = ExportInstanceParts(measurement, Phase::AssociationGap);
              }
              trace.Slice(kAssociationsProcess, track->first, "associationGap", "associationGap",
                          measurement.PhaseStart(Phase::AssociationGap), measurement.Phase(Phase::AssociationGap),
                          std::move(gapArgs));
            }
            trace.Slice(kAssociationsProcess, track->first, "instance", "C-STORE instance", measurement.startNs,
                        measurement.storedNs - measurement.startNs, args);
          }
        }
      }
    }


    using namespace TraceDetail;

    inline Json::Value ExportTrace(const RecentReport& report, int64_t seconds, bool hashPeers)
    {
      const RecentInstanceList& instances = report.ring.instances;
      const int64_t windowStartNs = report.nowNs - seconds * 1000000000;
      int64_t originNs = windowStartNs;
      for (const RecentInstance& instance : instances)
      {
        originNs = std::min(originNs, EarliestNs(instance));
      }
      TraceBuilder trace(originNs);
      trace.Name(kThreadsProcess, 0, "process_name", "Orthanc ingest threads");
      trace.Name(kAssociationsProcess, 0, "process_name", "C-STORE associations");

      std::map<uint32_t, bool> threads;
      std::vector<uint64_t> perSecond(static_cast<size_t>(seconds), 0);
      for (const RecentInstance& instance : instances)
      {
        if (threads.emplace(instance.thread, true).second)
        {
          trace.Name(kThreadsProcess, instance.thread, "thread_name", "thread " + std::to_string(instance.thread));
        }
        if (report.catalog != nullptr)
        {
          AddInstance(trace, instance, ExportRecentInstance(instance, *report.catalog, hashPeers));
        }
        const int64_t second = (instance.measurement.storedNs - windowStartNs) / 1000000000;
        if (instance.outcome == Outcome::Stored && second >= 0 && second < seconds)
        {
          perSecond[static_cast<size_t>(second)]++;
        }
      }
      for (size_t s = 0; s < perSecond.size(); s++)
      {
        trace.Counter(windowStartNs + static_cast<int64_t>(s) * 1000000000, "throughput", "instancesPerSecond",
                      perSecond[s]);
      }
      if (report.catalog != nullptr)
      {
        AddAssociations(trace, instances, *report.catalog, hashPeers);
      }

      Json::Value result;
      result["traceEvents"_key] = trace.Events();
      result["displayTimeUnit"_key] = "ms";
      Json::Value& other = result["otherData"_key];
      other["origin"_key] = IsoUtc(report.nowWallNs - (report.nowNs - originNs));
      other["seconds"_key] = Json::Int64(seconds);
      other["instances"_key] = Json::UInt64(instances.size());
      other["threads"_key] = Json::UInt64(threads.size());
      other["ring"_key] = ExportRing(report);
      return result;
    }

    namespace SlotsDetail
    {
      inline double Seconds(int64_t ns)
      {
        return std::round(static_cast<double>(ns) / 1e6) / 1e3;
      }

      // Only the phases with a sample in the slot: a chart draws nothing where there is none.
      inline Json::Value ExportSlot(const TransportSnapshot& transport, int64_t startWallNs, int64_t coveredNs)
      {
        Json::Value slot;
        slot["start"_key] = IsoUtc(startWallNs);
        slot["seconds"_key] = Seconds(coveredNs);
        slot["stored"_key] = Json::UInt64(transport.outcomes[static_cast<size_t>(Outcome::Stored)]);
        slot["bytes"_key] = Json::UInt64(transport.storedBytes.Sum());
        Json::Value& phases = slot["phases"_key];
        phases = Json::objectValue;
        for (size_t p = 0; p < kPhaseCount; p++)
        {
          const HistogramSnapshot& histogram = transport.phases[p];
          if (histogram.Count() == 0)
          {
            continue;
          }
          Json::Value& phase = phases[DefinitionOf(static_cast<Phase>(p)).name];
          phase["count"_key] = Json::UInt64(histogram.Count());
          phase["mean"_key] = NanosecondsToMilliseconds(std::llround(histogram.Mean()));
          phase["p50"_key] = NanosecondsToMilliseconds(histogram.ValueAtQuantile(0.5));
          phase["p99"_key] = NanosecondsToMilliseconds(histogram.ValueAtQuantile(0.99));
        }
        return slot;
      }
    }


    using namespace SlotsDetail;

    inline Json::Value ExportSlots(const SlotsReport& report, const StatsQuery& query)
    {
      const WindowSlots& window = report.window;
      Json::Value result;
      result["window"_key] = WindowName(query.window);
      result["slotSeconds"_key] = Seconds(window.slotNs);
      result["fullSlots"_key] = window.fullSlots;
      result["seconds"_key] = Seconds(window.coveredNs);
      result["now"_key] = IsoUtc(report.nowWallNs);
      result["droppedAtRotation"_key] = Json::UInt64(window.droppedAtRotation);
      result["straddledRotation"_key] = Json::UInt64(window.straddledRotation);
      result["units"_key]["durations"_key] = "milliseconds";
      result["units"_key]["sizes"_key] = "bytes";

      Json::Value& transports = result["transports"_key];
      transports = Json::objectValue;
      for (size_t t = 0; t <= kTransportCount; t++)  // kTransportCount: "all", their merge
      {
        const bool merged = (t == kTransportCount);
        if (merged ? query.scope == StatsQuery::Scope::Single : !query.ListsTransport(static_cast<Transport>(t)))
        {
          continue;
        }
        Json::Value& slots = transports[merged ? "all" : TransportName(static_cast<Transport>(t))];
        slots = Json::arrayValue;
        for (const SlotSnapshot& slot : window.slots)
        {
          TransportSnapshot figures;
          if (merged)
          {
            for (const TransportSnapshot& each : slot.transports)
            {
              figures.Merge(each);
            }
          }
          const TransportSnapshot& shown = merged ? figures : slot.transports[t];
          slots.append(ExportSlot(shown, report.nowWallNs - (report.nowNs - slot.startNs), slot.coveredNs));
        }
      }
      return result;
    }
  }
}
