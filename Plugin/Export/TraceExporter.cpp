#include "Export/TraceExporter.h"

#include "Export/JsonExporter.h"
#include "Export/SlowestExporter.h"
#include "Labels/PeerPseudonym.h"
#include "Platform/MappedAllocator.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    constexpr int kThreadsProcess = 1;
    constexpr int kAssociationsProcess = 2;

    enum class EventKind : uint8_t
    {
      Instance,             // process 1: the instance's slice (serverTotal), args: the instance
      Phase,                // process 1: a phase inside it, args: its parts when split
      RequestGap,           // process 1: before an HTTP instance, args: its parts when split
      Counter,              // process 1, track 0: instances stored in the second that starts at startNs
      AssociationGap,       // process 2: before a C-STORE instance, args: instanceId, remoteAet, parts
      AssociationInstance,  // process 2: the C-STORE instance, args: instanceId, remoteAet
    };

    // One event, as what it is written from (no text, no tree): the instance it belongs to, and
    // where it goes.
    struct Event
    {
      int64_t tid;
      int64_t startNs;
      int64_t durationNs;
      const RecentInstance* instance;  // nullptr for a counter
      uint64_t count;                  // a counter's value
      uint32_t aet;                    // process 2: the index of the calling AET's exported name
      uint8_t pid;
      EventKind kind;
      Phase phase;  // EventKind::Phase
    };

    // A metadata event (ph "M"): the name of a process or of a track.
    struct Metadata
    {
      int pid;
      int64_t tid;
      const char* kind;  // "process_name" or "thread_name"
      std::string name;
    };

    class TraceBuilder
    {
    public:
      TraceBuilder(int64_t originNs, size_t maxEvents) :
        originNs_(originNs)
      {
        events_.reserve(maxEvents);  // never moved: pages of their own, the bound reserved once
      }

      void Slice(int pid, int64_t tid, EventKind kind, int64_t startNs, int64_t durationNs,
                 const RecentInstance* instance, Phase phase = Phase::Count, uint32_t aet = 0)
      {
        events_.push_back(Event{tid, startNs, durationNs, instance, 0, aet, static_cast<uint8_t>(pid), kind, phase});
      }

      void Counter(int64_t atNs, uint64_t value)
      {
        events_.push_back(Event{0, atNs, 0, nullptr, value, 0, static_cast<uint8_t>(kThreadsProcess),
                                EventKind::Counter, Phase::Count});
      }

      void Name(int pid, int64_t tid, const char* kind, std::string name)
      {
        metadata_.push_back(Metadata{pid, tid, kind, std::move(name)});
      }

      uint32_t AddAet(std::string aet)
      {
        aets_.push_back(std::move(aet));
        return static_cast<uint32_t>(aets_.size() - 1);
      }

      // The metadata in the order of addition, then the events: per track in time order, an
      // enclosing slice before the slices it encloses; the order of addition between equals (an
      // index sort: 4 bytes per event, the events never moved).
      void WriteEvents(JsonWriter& out, const LabelCatalog* catalog, bool hashPeers) const
      {
        std::vector<uint32_t, MappedAllocator<uint32_t>> order(events_.size());
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
        out.BeginArray();
        for (const Metadata& metadata : metadata_)
        {
          out.BeginObject();
          out.Member("name", metadata.kind);
          out.Member("ph", "M");
          out.Member("pid", metadata.pid);
          out.Member("tid", metadata.tid);
          out.Key("args");
          out.BeginObject();
          out.Member("name", metadata.name);
          out.EndObject();
          out.EndObject();
        }
        for (uint32_t index : order)
        {
          WriteEvent(out, events_[index], catalog, hashPeers);
        }
        out.EndArray();
      }

    private:
      double Microseconds(int64_t ns) const { return static_cast<double>(ns) / 1000.0; }

      void WriteEvent(JsonWriter& out, const Event& event, const LabelCatalog* catalog, bool hashPeers) const
      {
        out.BeginObject();
        if (event.kind == EventKind::Counter)
        {
          out.Member("name", "throughput");
          out.Member("ph", "C");
          out.Member("ts", Microseconds(event.startNs - originNs_));
          out.Member("pid", kThreadsProcess);
          out.Member("tid", 0);
          out.Key("args");
          out.BeginObject();
          out.Member("instancesPerSecond", event.count);
          out.EndObject();
          out.EndObject();
          return;
        }
        const RecentInstance& instance = *event.instance;
        const InstanceMeasurement& measurement = instance.measurement;
        switch (event.kind)
        {
          case EventKind::Instance:
            out.Member("name", std::string(TransportName(instance.labels.GetTransport())) + " instance");
            out.Member("cat", "instance");
            break;
          case EventKind::Phase:
            out.Member("name", DefinitionOf(event.phase).name);
            out.Member("cat", "phase");
            break;
          case EventKind::RequestGap:
            out.Member("name", "requestGap");
            out.Member("cat", "requestGap");
            break;
          case EventKind::AssociationGap:
            out.Member("name", "associationGap");
            out.Member("cat", "associationGap");
            break;
          case EventKind::AssociationInstance:
          default:
            out.Member("name", "C-STORE instance");
            out.Member("cat", "instance");
            break;
        }
        out.Member("ph", "X");
        out.Member("ts", Microseconds(event.startNs - originNs_));
        out.Member("dur", Microseconds(event.durationNs));
        out.Member("pid", static_cast<int>(event.pid));
        out.Member("tid", event.tid);
        switch (event.kind)
        {
          case EventKind::Instance:
            // What /perf/slowest shows of it, with the instance's own parts (serverTotal's).
            out.Key("args");
            WriteRecentInstance(out, instance, *catalog, hashPeers, RecentParts::ServerTotalWhenSplit);
            break;
          case EventKind::Phase:
          case EventKind::RequestGap:
          {
            const Phase phase = event.kind == EventKind::Phase ? event.phase : Phase::RequestGap;
            if (measurement.HasParts(phase))
            {
              out.Key("args");
              WriteInstanceParts(out, measurement, phase);
            }
            break;
          }
          default:
            out.Key("args");
            out.BeginObject();
            out.Member("instanceId", instance.instanceId);
            out.Member("remoteAet", aets_[event.aet]);
            if (event.kind == EventKind::AssociationGap && measurement.HasParts(Phase::AssociationGap))
            {
              out.Key("parts");
              WriteInstanceParts(out, measurement, Phase::AssociationGap);
            }
            out.EndObject();
            break;
        }
        out.EndObject();
      }

      int64_t originNs_;
      // Up to 16 per instance: 4,096 instances are about 3 MB of records, in pages of their own
      // (Platform/MappedAllocator), never in a malloc arena.
      std::vector<Event, MappedAllocator<Event>> events_;
      std::vector<Metadata> metadata_;  // a few per thread and association
      std::vector<std::string> aets_;   // the calling AETs, as exported
    };

    int64_t EarliestNs(const RecentInstance& instance)
    {
      const InstanceMeasurement& measurement = instance.measurement;
      int64_t earliest = measurement.startNs;
      if (measurement.Phase(Phase::AssociationGap) != InstanceMeasurement::kNotMeasured)
      {
        earliest = std::min(earliest, measurement.PhaseStart(Phase::AssociationGap));
      }
      return earliest;
    }

    void AddInstance(TraceBuilder& trace, const RecentInstance& instance)
    {
      const InstanceMeasurement& measurement = instance.measurement;
      trace.Slice(kThreadsProcess, instance.thread, EventKind::Instance, measurement.startNs,
                  measurement.storedNs - measurement.startNs, &instance);
      // Inside the instance's slice, the phases the vocabulary places inside it, each within its
      // parent (receive, preStore > transcode, persist > storagePrepare, storageWrite, indexUpdate),
      // with their parts (ms) as args when the instance's phases were split.
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        const Phase phase = static_cast<Phase>(p);
        if (DefinitionOf(phase).place == PhasePlace::Inside &&
            measurement.Phase(phase) != InstanceMeasurement::kNotMeasured)
        {
          trace.Slice(kThreadsProcess, instance.thread, EventKind::Phase, measurement.PhaseStart(phase),
                      measurement.Phase(phase), &instance, phase);
        }
      }
      // Before it on the same thread, the time since the previous request of its HTTP connection.
      if (measurement.Phase(Phase::RequestGap) != InstanceMeasurement::kNotMeasured)
      {
        trace.Slice(kThreadsProcess, instance.thread, EventKind::RequestGap, measurement.PhaseStart(Phase::RequestGap),
                    measurement.Phase(Phase::RequestGap), &instance);
      }
    }

    // The C-STORE instances of each calling AET, laid out on tracks that never overlap themselves:
    // one track per chain of instances that followed each other, as an association sends them.
    void AddAssociations(TraceBuilder& trace, const RecentInstanceList& instances, const LabelCatalog& catalog,
                         bool hashPeers)
    {
      // By id and generation: the same id may name two AETs, one before and one after the labels aged out.
      std::map<std::pair<uint32_t, LabelId>, std::vector<const RecentInstance*>> byPeer;
      for (const RecentInstance& instance : instances)
      {
        if (instance.labels.GetTransport() == Transport::Dicom)
        {
          const LabelId aet = instance.labels.Get(LabelDimension::RemoteAet);
          byPeer[{instance.labels.generation, aet}].push_back(&instance);
        }
      }
      int64_t nextTrack = 1;
      for (auto& peer : byPeer)
      {
        const std::string aet =
          ExportedLabelValue(LabelDimension::RemoteAet,
                             catalog.Name(LabelDimension::RemoteAet, peer.first.second, peer.first.first), hashPeers);
        const uint32_t aetIndex = trace.AddAet(aet);
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
          if (measurement.Phase(Phase::AssociationGap) != InstanceMeasurement::kNotMeasured)
          {
            trace.Slice(kAssociationsProcess, track->first, EventKind::AssociationGap,
                        measurement.PhaseStart(Phase::AssociationGap), measurement.Phase(Phase::AssociationGap),
                        instance, Phase::Count, aetIndex);
          }
          trace.Slice(kAssociationsProcess, track->first, EventKind::AssociationInstance, measurement.startNs,
                      measurement.storedNs - measurement.startNs, instance, Phase::Count, aetIndex);
        }
      }
    }
  }


  void WriteTrace(JsonWriter& out, const RecentReport& report, int64_t seconds, bool hashPeers)
  {
    const RecentInstanceList& instances = report.ring.instances;
    const int64_t windowStartNs = report.nowNs - seconds * 1000000000;
    int64_t originNs = windowStartNs;
    for (const RecentInstance& instance : instances)
    {
      originNs = std::min(originNs, EarliestNs(instance));
    }
    // Per instance at most: its slice, each phase, its requestGap, and in process 2 two more.
    const size_t maxEvents = instances.size() * (kPhaseCount + 4) + static_cast<size_t>(std::max<int64_t>(seconds, 0));
    TraceBuilder trace(originNs, maxEvents);
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
        AddInstance(trace, instance);
      }
      const int64_t second = (instance.measurement.storedNs - windowStartNs) / 1000000000;
      if (instance.outcome == Outcome::Stored && second >= 0 && second < seconds)
      {
        perSecond[static_cast<size_t>(second)]++;
      }
    }
    for (size_t s = 0; s < perSecond.size(); s++)
    {
      trace.Counter(windowStartNs + static_cast<int64_t>(s) * 1000000000, perSecond[s]);
    }
    if (report.catalog != nullptr)
    {
      AddAssociations(trace, instances, *report.catalog, hashPeers);
    }

    // displayTimeUnit and otherData before the events, as in jsoncpp's order of the keys: a reader
    // that streams the document (Perfetto's) knows them before the first event.
    out.BeginObject();
    out.Member("displayTimeUnit", "ms");
    out.Key("otherData");
    out.BeginObject();
    out.Member("origin", IsoUtc(report.nowWallNs - (report.nowNs - originNs)));
    out.Member("seconds", seconds);
    out.Member("instances", instances.size());
    out.Member("threads", threads.size());
    out.Key("ring");
    WriteRing(out, report);
    out.EndObject();
    out.Key("traceEvents");
    trace.WriteEvents(out, report.catalog, hashPeers);
    out.EndObject();
  }
}
