#include "Export/SlowestExporter.h"

#include "Platform/JsonText.h"

#include "Export/JsonExporter.h"
#include "Labels/PeerPseudonym.h"

#include <cmath>

namespace IngestPerf
{
  Json::Value ExportRecentInstance(const RecentInstance& instance, const LabelCatalog& catalog, bool hashPeers)
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


  Json::Value ExportRing(const RecentReport& report)
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


  Json::Value ExportSlowest(const RecentReport& report, const RecentQuery& query, bool hashPeers)
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
}
