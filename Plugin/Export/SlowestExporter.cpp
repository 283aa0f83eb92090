#include "Export/SlowestExporter.h"

#include "Export/JsonExporter.h"
#include "Labels/PeerPseudonym.h"

#include <cmath>

namespace IngestPerf
{
  void WriteInstanceParts(JsonWriter& out, const InstanceMeasurement& measurement, Phase phase)
  {
    out.BeginObject();
    out.Member("onCpu", NanosecondsToMilliseconds(measurement.CpuNs(phase)));
    if (measurement.RunDelayNs(phase) != InstanceMeasurement::kNotMeasured)
    {
      out.Member("waitingForCpu", NanosecondsToMilliseconds(measurement.RunDelayNs(phase)));
    }
    out.Member("blocked", NanosecondsToMilliseconds(measurement.BlockedNs(phase)));
    out.EndObject();
  }


  void WriteRecentInstance(JsonWriter& out, const RecentInstance& instance, const LabelCatalog& catalog, bool hashPeers,
                           RecentParts parts)
  {
    const InstanceMeasurement& measurement = instance.measurement;
    out.BeginObject();
    out.Member("instanceId", instance.instanceId);
    out.Member("arrival", IsoUtc(instance.startWallNs));
    out.Member("thread", instance.thread);
    out.Member("transport", TransportName(instance.labels.GetTransport()));
    out.Member("outcome", DefinitionOf(instance.outcome).name);
    out.Member("storedBytes", measurement.storedBytes);
    out.Key("phases");
    out.BeginObject();
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      if (measurement.phaseNs[p] != InstanceMeasurement::kNotMeasured)
      {
        out.Member(DefinitionOf(static_cast<Phase>(p)).name, NanosecondsToMilliseconds(measurement.phaseNs[p]));
      }
    }
    out.EndObject();
    // Where each phase's time went, for an instance whose phases were split (PhasePartsSampling).
    out.Key("parts");
    if (parts == RecentParts::ServerTotalWhenSplit && measurement.HasParts(Phase::ServerTotal))
    {
      WriteInstanceParts(out, measurement, Phase::ServerTotal);
    }
    else
    {
      out.BeginObject();
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        const Phase phase = static_cast<Phase>(p);
        if (measurement.HasParts(phase))
        {
          out.Key(DefinitionOf(phase).name);
          WriteInstanceParts(out, measurement, phase);
        }
      }
      out.EndObject();
    }
    out.Key("labels");
    out.BeginObject();
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      const LabelDimension dimension = static_cast<LabelDimension>(d);
      if (dimension != LabelDimension::Transport)
      {
        out.Member(
          LabelDimensionName(dimension),
          ExportedLabelValue(
            dimension, catalog.Name(dimension, instance.labels.Get(dimension), instance.labels.generation), hashPeers));
      }
    }
    out.EndObject();
    out.EndObject();
  }


  void WriteRing(JsonWriter& out, const RecentReport& report, std::optional<bool> coversWindow)
  {
    out.BeginObject();
    out.Member("capacity", report.ring.capacity);
    out.Member("held", report.ring.held);
    out.Member("pushed", report.ring.pushed);
    out.Member("skipped", report.ring.skipped);
    if (report.ring.oldestStoredNs != 0)
    {
      const int64_t back = report.nowNs - report.ring.oldestStoredNs;
      out.Member("oldest", IsoUtc(report.nowWallNs - back));
      out.Member("reachesBackSeconds", std::round(static_cast<double>(back) / 1e6) / 1e3);
    }
    else
    {
      out.Member("oldest", nullptr);
      out.Member("reachesBackSeconds", 0.0);
    }
    if (coversWindow.has_value())
    {
      out.Member("coversWindow", *coversWindow);
    }
    out.EndObject();
  }


  void WriteSlowest(JsonWriter& out, const RecentReport& report, const RecentQuery& query, bool hashPeers)
  {
    out.BeginObject();
    out.Member("phase", DefinitionOf(query.phase).name);
    out.Member("n", query.count);
    out.Member("window", query.window);
    out.Member("windowSeconds", query.windowSeconds);
    out.Member("units", "ms");
    out.Member("matched", report.matched);
    // Whether the window was seen whole: nothing was overwritten since the reset, or what was is older.
    out.Key("ring");
    WriteRing(out, report,
              report.ring.pushed <= report.ring.capacity ||
                (report.ring.oldestStoredNs != 0 &&
                 report.nowNs - report.ring.oldestStoredNs >= query.windowSeconds * 1000000000));
    out.Key("instances");
    out.BeginArray();
    if (report.catalog != nullptr)
    {
      for (const RecentInstance& instance : report.ring.instances)
      {
        WriteRecentInstance(out, instance, *report.catalog, hashPeers);
      }
    }
    out.EndArray();
    out.EndObject();
  }
}
