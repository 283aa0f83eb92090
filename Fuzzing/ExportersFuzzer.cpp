// The exporters (Export/JsonExporter, Export/PrometheusExporter, Export/SlowestExporter,
// Export/TraceExporter) with label values of arbitrary bytes, interned as the hooks intern them
// (LabelCatalog, LabelExposure): the input is cut at '\n' into values, six per labelled stream
// (remoteAet, remoteIp, calledAet, receivedSyntax, storedSyntax, sopClass), the stream's transport
// chosen by its first byte. Checked: the Prometheus text is valid UTF-8 and every line a comment or
// a well-formed sample (name, labels whose values hold only the format's three escapes, a number);
// the JSON of /perf/stats, plain and grouped by a label (chosen by the input's length), and of
// /perf/slowest and /perf/trace (a recent instance per stream, its Orthanc ID the stream's first
// value, its bytes as they are; peers hashed or not, by the input's length) is one whole document
// that a strict reader takes, and valid UTF-8; a UID label is a standard UID or a stand-in.
#include "FuzzProperty.h"

#include "Export/JsonExporter.h"
#include "Export/PrometheusExporter.h"
#include "Export/SlowestExporter.h"
#include "Export/TraceExporter.h"
#include "Labels/LabelCatalog.h"
#include "Labels/LabelExposure.h"
#include "Metrics/Histogram.h"
#include "Metrics/StatsQuery.h"
#include "Platform/PluginStatus.h"
#include "Recording/IngestReport.h"

#include <json/reader.h>
#include <json/writer.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace IngestPerf;

namespace
{
  // Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
  bool IsValidUtf8(const std::string& text)
  {
    const unsigned char* s = reinterpret_cast<const unsigned char*>(text.data());
    const size_t n = text.size();
    for (size_t i = 0; i < n;)
    {
      const unsigned char c = s[i];
      size_t extra;
      uint32_t cp;
      if (c < 0x80)
      {
        i++;
        continue;
      }
      if (c >= 0xC2 && c <= 0xDF)
      {
        extra = 1, cp = c & 0x1F;
      }
      else if (c >= 0xE0 && c <= 0xEF)
      {
        extra = 2, cp = c & 0x0F;
      }
      else if (c >= 0xF0 && c <= 0xF4)
      {
        extra = 3, cp = c & 0x07;
      }
      else
      {
        return false;
      }
      if (i + extra >= n)
      {
        return false;
      }
      for (size_t k = 1; k <= extra; k++)
      {
        if ((s[i + k] & 0xC0) != 0x80)
        {
          return false;
        }
        cp = (cp << 6) | (s[i + k] & 0x3F);
      }
      if ((extra == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
          (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
      {
        return false;
      }
      i += extra + 1;
    }
    return true;
  }

  bool IsNameChar(char c, bool first)
  {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
  }

  // One line of the text format: "# ..." or name{label="value",...} number.
  bool IsWellFormedLine(const std::string& line)
  {
    if (line.empty() || line[0] == '#')
    {
      return true;
    }
    size_t i = 0;
    if (!IsNameChar(line[0], true))
    {
      return false;
    }
    while (i < line.size() && IsNameChar(line[i], i == 0))
    {
      i++;
    }
    if (i < line.size() && line[i] == '{')
    {
      i++;
      while (i < line.size() && line[i] != '}')
      {
        const size_t nameStart = i;
        while (i < line.size() && IsNameChar(line[i], i == nameStart))
        {
          i++;
        }
        if (i == nameStart || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"')
        {
          return false;
        }
        i += 2;
        while (i < line.size() && line[i] != '"')
        {
          if (line[i] == '\\')
          {
            if (i + 1 >= line.size() || (line[i + 1] != '\\' && line[i + 1] != '"' && line[i + 1] != 'n'))
            {
              return false;
            }
            i++;
          }
          else if (line[i] == '\n')
          {
            return false;
          }
          i++;
        }
        if (i >= line.size())
        {
          return false;
        }
        i++;  // the closing quote
        if (i < line.size() && line[i] == ',')
        {
          i++;
        }
      }
      if (i >= line.size())
      {
        return false;
      }
      i++;  // '}'
    }
    if (i >= line.size() || line[i] != ' ')
    {
      return false;
    }
    const std::string number = line.substr(i + 1);
    if (number == "+Inf" || number == "-Inf" || number == "NaN")
    {
      return true;
    }
    char* end = nullptr;
    strtod(number.c_str(), &end);
    return !number.empty() && end == number.c_str() + number.size();
  }

  // A document as its route writes it (`write(JsonWriter&)`): one whole JSON document in valid
  // UTF-8, which a strict reader (duplicate keys refused) takes whole.
  template <typename Write>
  void CheckDocument(Write write)
  {
    MappedText answer;
    JsonWriter out(answer);
    write(out);
    FUZZ_PROPERTY(out.OpenContainers() == 0);
    const std::string text(answer.Data(), answer.Size());
    FUZZ_PROPERTY(IsValidUtf8(text));
    Json::CharReaderBuilder builder;
    Json::CharReaderBuilder::strictMode(&builder.settings_);
    std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    Json::Value parsed;
    std::string errors;
    FUZZ_PROPERTY(reader->parse(text.data(), text.data() + text.size(), &parsed, &errors));
    FUZZ_PROPERTY(parsed.isObject());
  }

  void CheckStats(const IngestReport& report, const StatsQuery& query)
  {
    CheckDocument([&](JsonWriter& out) { WriteStats(out, report, query); });
  }

  // An instance of the recent ring with these labels and Orthanc ID, its phases split or not.
  RecentInstance Recent(const InstanceLabels& labels, const std::string& id, size_t k)
  {
    constexpr int64_t kMs = 1000000;
    InstanceMeasurement measurement;
    measurement.hasTimeline = true;
    measurement.startNs = 1000000 * kMs + static_cast<int64_t>(k) * 3 * kMs;
    measurement.storedNs = measurement.startNs + 2 * kMs;
    measurement.Set(Phase::PreStore, measurement.startNs, kMs);
    measurement.Set(Phase::Persist, measurement.startNs + kMs, kMs);
    measurement.Set(Phase::ServerTotal, measurement.startNs, 2 * kMs);
    measurement.Set(Phase::AssociationGap, measurement.startNs - kMs, kMs);
    if (k % 2 == 1)
    {
      measurement.SetParts(Phase::ServerTotal, kMs, k % 3 == 0 ? InstanceMeasurement::kNotMeasured : kMs / 2);
    }
    RecentInstance instance;
    FillRecentInstance(instance, measurement, 1795000000 * int64_t(1000000000), labels, Outcome::Stored,
                       static_cast<uint32_t>(k), id.c_str());
    return instance;
  }
}


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size > 8192)
  {
    return 0;
  }
  PluginStatus status;
  LabelCatalog catalog(8);
  IngestReport report;
  report.status = &status;
  report.collected = true;
  report.catalog = &catalog;

  const std::vector<std::string> values = Fuzzing::Split(data, size, '\n');
  for (size_t first = 0; first < values.size() && report.eachStream.size() < 8; first += 6)
  {
    auto value = [&](size_t k) { return first + k < values.size() ? values[first + k].c_str() : nullptr; };
    RawLabels raw;
    raw.remoteAet = value(0);
    raw.remoteIp = value(1);
    raw.calledAet = value(2);
    raw.receivedSyntax = value(3);
    raw.storedSyntax = value(4);
    raw.sopClass = value(5);
    const unsigned char chooser = values[first].empty() ? 0 : static_cast<unsigned char>(values[first][0]);
    const Transport transport = static_cast<Transport>(chooser % static_cast<unsigned>(Transport::Count));
    const InstanceLabels labels = catalog.Intern(transport, raw, values[first].size() * 4096);
    for (LabelDimension dimension :
         {LabelDimension::ReceivedSyntax, LabelDimension::StoredSyntax, LabelDimension::SopClass})
    {
      const std::string name = catalog.Name(dimension, labels.Get(dimension));
      FUZZ_PROPERTY(name == kNotAUidLabel || name == kUnlistedUidLabel || name == kUnknownLabel || name == "(none)" ||
                    name == "(other)" || IsStandardUid(dimension, name.c_str(), name.size()));
    }
    Histogram histogram{};
    histogram.Record(1000 + static_cast<int64_t>(first) * 1000);
    TransportSnapshot snapshot;
    snapshot.phases[static_cast<size_t>(Phase::ServerTotal)] = histogram.Snapshot();
    snapshot.outcomes[static_cast<size_t>(Outcome::Stored)] = 1;
    report.eachStream.emplace_back(labels, snapshot);
    report.snapshot.transports[static_cast<size_t>(transport)].Merge(snapshot);
  }

  const std::string text = ExportPrometheus(report);
  FUZZ_PROPERTY(IsValidUtf8(text));
  size_t start = 0;
  while (start < text.size())
  {
    size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end;
    FUZZ_PROPERTY(IsWellFormedLine(text.substr(start, end - start)));
    start = end + 1;
  }

  // /perf/slowest and /perf/trace, a recent instance per labelled stream.
  RecentReport recent;
  recent.collected = true;
  recent.nowNs = 1002000 * int64_t(1000000);
  recent.nowWallNs = 1795000000 * int64_t(1000000000);
  recent.catalog = &catalog;
  recent.ring.capacity = 8;
  for (size_t k = 0; k < report.eachStream.size(); k++)
  {
    recent.ring.instances.push_back(Recent(report.eachStream[k].first, values[k * 6], k));
  }
  recent.ring.held = recent.ring.pushed = recent.matched = recent.ring.instances.size();
  recent.ring.oldestStoredNs = recent.ring.instances.empty() ? 0 : recent.ring.instances[0].measurement.storedNs;
  const bool hashPeers = size % 2 == 1;
  CheckDocument([&](JsonWriter& out) { WriteSlowest(out, recent, RecentQuery(), hashPeers); });
  CheckDocument([&](JsonWriter& out) { WriteTrace(out, recent, 5, hashPeers); });

  StatsQuery query;
  CheckStats(report, query);
  // Grouped by one label, chosen by the input's length (every label, the fuzzer's runs together).
  StatsQuery grouped;
  grouped.hasGroupBy = true;
  grouped.groupBy = static_cast<LabelDimension>(size % kLabelDimensions);
  CheckStats(report, grouped);
  return 0;
}
