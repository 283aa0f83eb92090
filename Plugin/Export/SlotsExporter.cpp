#include "Export/SlotsExporter.h"

#include "Platform/JsonText.h"

#include "Export/JsonExporter.h"

#include <cmath>

namespace IngestPerf
{
  namespace
  {
    double Seconds(int64_t ns)
    {
      return std::round(static_cast<double>(ns) / 1e6) / 1e3;
    }

    // Only the phases with a sample in the slot: a chart draws nothing where there is none.
    Json::Value ExportSlot(const TransportSnapshot& transport, int64_t startWallNs, int64_t coveredNs)
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


  Json::Value ExportSlots(const SlotsReport& report, const StatsQuery& query)
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
