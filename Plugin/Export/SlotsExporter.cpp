#include "Export/SlotsExporter.h"

#include "Export/JsonExporter.h"

#include <cmath>

namespace IngestPerf
{
  namespace
  {
    // Only the phases with a sample in the slot: a chart draws nothing where there is none.
    void WriteSlot(JsonWriter& out, const TransportSnapshot& transport, int64_t startWallNs, int64_t coveredNs)
    {
      out.BeginObject();
      out.Member("start", IsoUtc(startWallNs));
      out.Member("seconds", Seconds(coveredNs));
      out.Member("stored", transport.outcomes[static_cast<size_t>(Outcome::Stored)]);
      out.Member("bytes", transport.storedBytes.Sum());
      out.Key("phases");
      out.BeginObject();
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        const HistogramSnapshot& histogram = transport.phases[p];
        if (histogram.Count() == 0)
        {
          continue;
        }
        out.Key(DefinitionOf(static_cast<Phase>(p)).name);
        out.BeginObject();
        out.Member("count", histogram.Count());
        out.Member("mean", NanosecondsToMilliseconds(std::llround(histogram.Mean())));
        out.Member("p50", NanosecondsToMilliseconds(histogram.ValueAtQuantile(0.5)));
        out.Member("p99", NanosecondsToMilliseconds(histogram.ValueAtQuantile(0.99)));
        out.EndObject();
      }
      out.EndObject();
      out.EndObject();
    }
  }


  void WriteSlots(JsonWriter& out, const SlotsReport& report, const StatsQuery& query)
  {
    const WindowSlots& window = report.window;
    out.BeginObject();
    out.Member("window", WindowName(query.window));
    out.Member("slotSeconds", Seconds(window.slotNs));
    out.Member("fullSlots", window.fullSlots);
    out.Member("seconds", Seconds(window.coveredNs));
    out.Member("now", IsoUtc(report.nowWallNs));
    out.Member("droppedAtRotation", window.droppedAtRotation);
    out.Member("straddledRotation", window.straddledRotation);
    out.Key("units");
    out.BeginObject();
    out.Member("durations", "milliseconds");
    out.Member("sizes", "bytes");
    out.EndObject();

    out.Key("transports");
    out.BeginObject();
    for (size_t t = 0; t <= kTransportCount; t++)  // kTransportCount: "all", their merge
    {
      const bool merged = (t == kTransportCount);
      if (merged ? query.scope == StatsQuery::Scope::Single : !query.ListsTransport(static_cast<Transport>(t)))
      {
        continue;
      }
      out.Key(merged ? "all" : TransportName(static_cast<Transport>(t)));
      out.BeginArray();
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
        WriteSlot(out, shown, report.nowWallNs - (report.nowNs - slot.startNs), slot.coveredNs);
      }
      out.EndArray();
    }
    out.EndObject();
    out.EndObject();
  }
}
