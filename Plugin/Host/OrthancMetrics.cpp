#include "Host/OrthancMetrics.h"

#include "Platform/MonotonicClock.h"
#include "Platform/OrthancSdk.h"
#include "Recording/IngestState.h"

#include <json/reader.h>

#include <atomic>
#include <cstdlib>
#include <sstream>
#include <cstring>
#include <memory>

namespace IngestPerf
{
  namespace
  {
    const char kActiveRequests[] = "orthanc_rest_api_active_requests";
  }


  int64_t ParseActiveRestRequests(const std::string& prometheusText)
  {
    const size_t nameLength = sizeof(kActiveRequests) - 1;
    size_t line = 0;
    while (line < prometheusText.size())
    {
      size_t end = prometheusText.find('\n', line);
      if (end == std::string::npos)
      {
        end = prometheusText.size();
      }
      // "name value [timestamp]": the name alone, then a space, then digits.
      if (end - line > nameLength + 1 && prometheusText.compare(line, nameLength, kActiveRequests) == 0 &&
          prometheusText[line + nameLength] == ' ')
      {
        int64_t value = 0;
        size_t i = line + nameLength + 1;
        const size_t first = i;
        while (i < end && prometheusText[i] >= '0' && prometheusText[i] <= '9' && i - first < 18)
        {
          value = value * 10 + (prometheusText[i] - '0');
          i++;
        }
        const bool ended = (i == end || prometheusText[i] == ' ' || prometheusText[i] == '\r');
        return (i > first && ended) ? value : -1;
      }
      line = end + 1;
    }
    return -1;
  }


  int64_t OtherRestRequestsInProgress()
  {
    std::string text;
    if (!OrthancSdk::RestApiGet("/tools/metrics-prometheus", text))
    {
      return -1;
    }
    const int64_t active = ParseActiveRestRequests(text);
    // This internal GET is one of them.
    return active >= 1 ? active - 1 : -1;
  }


  bool ReadStorageUsage(StorageUsage& usage)
  {
    std::string text;
    Json::Value statistics;
    Json::CharReaderBuilder builder;
    std::string errors;
    std::istringstream stream;
    if (!OrthancSdk::RestApiGet("/statistics", text))
    {
      return false;
    }
    stream.str(text);
    if (!Json::parseFromStream(builder, stream, &statistics, &errors) || !statistics.isObject())
    {
      return false;
    }
    // TotalDiskSize is a string of bytes (a JSON number would lose precision past 2^53).
    const Json::Value& size = statistics["TotalDiskSize"];
    const Json::Value& patients = statistics["CountPatients"];
    if (!size.isString() || !patients.isUInt64())
    {
      return false;
    }
    usage.bytes = std::strtoull(size.asCString(), nullptr, 10);
    usage.patients = patients.asUInt64();
    return true;
  }


  std::vector<std::pair<std::string, float>> PublishedOrthancMetrics(const StatsSnapshot& snapshot,
                                                                     const WindowSnapshot* lastMinute)
  {
    const auto seconds = [](int64_t ns) { return static_cast<float>(static_cast<double>(ns) / 1e9); };
    std::vector<std::pair<std::string, float>> values;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      const TransportSnapshot& transport = snapshot.transports[t];
      const HistogramSnapshot& serverTotal = transport.phases[static_cast<size_t>(Phase::ServerTotal)];
      const std::string prefix = std::string("orthanc_ingest_perf_") + TransportName(static_cast<Transport>(t));
      values.emplace_back(prefix + "_stored_instances_since_start",
                          static_cast<float>(transport.outcomes[static_cast<size_t>(Outcome::Stored)]));
      values.emplace_back(prefix + "_server_total_p50_seconds_since_start",
                          static_cast<float>(static_cast<double>(serverTotal.ValueAtQuantile(0.5)) / 1e9));
      values.emplace_back(prefix + "_server_total_p99_seconds_since_start",
                          static_cast<float>(static_cast<double>(serverTotal.ValueAtQuantile(0.99)) / 1e9));
      if (lastMinute == nullptr)
      {
        continue;
      }
      const TransportSnapshot& recent = lastMinute->transports[t];
      const HistogramSnapshot& recentTotal = recent.phases[static_cast<size_t>(Phase::ServerTotal)];
      const double covered = static_cast<double>(lastMinute->coveredNs) / 1e9;
      const double stored = static_cast<double>(recent.outcomes[static_cast<size_t>(Outcome::Stored)]);
      values.emplace_back(prefix + "_instances_per_second_1m", static_cast<float>(covered > 0 ? stored / covered : 0));
      values.emplace_back(prefix + "_server_total_p50_seconds_1m", seconds(recentTotal.ValueAtQuantile(0.5)));
      values.emplace_back(prefix + "_server_total_p99_seconds_1m", seconds(recentTotal.ValueAtQuantile(0.99)));
      if (static_cast<Transport>(t) == Transport::Dicom)
      {
        values.emplace_back(prefix + "_association_gap_p50_seconds_1m",
                            seconds(recent.phases[static_cast<size_t>(Phase::AssociationGap)].ValueAtQuantile(0.5)));
      }
    }
    return values;
  }


  namespace
  {
    constexpr int64_t kRefreshPeriodNs = 1000000000;
    std::atomic<int64_t> lastPublishedNs{0};
    const PluginStatus* publishedStatus = nullptr;

    // Orthanc calls it before answering /tools/metrics-prometheus, our own reading of it included
    // (OtherRestRequestsInProgress): at most one snapshot a second, so a /perf/stats pays it rarely.
    void RefreshPublishedMetrics()
    {
      try
      {
        const IngestState* state = ActiveIngestState();
        const int64_t now = MonotonicNowNs();
        int64_t last = lastPublishedNs.load(std::memory_order_relaxed);
        if (state == nullptr || (last != 0 && now - last < kRefreshPeriodNs) ||
            !lastPublishedNs.compare_exchange_strong(last, now, std::memory_order_relaxed))
        {
          return;
        }
        // The statistics only, not a whole Collect: this runs inside Orthanc's answer to
        // /tools/metrics-prometheus, which /perf/stats itself reads in the middle of its Collect
        // (OtherRestRequestsInProgress), on an HTTP thread with a small stack.
        const std::unique_ptr<StatsSnapshot> snapshot(new StatsSnapshot(state->stats.Snapshot(now)));
        std::unique_ptr<WindowSnapshot> lastMinute;
        if (state->stats.HasWindows())
        {
          lastMinute.reset(new WindowSnapshot(state->stats.SnapshotWindow(Window::OneMinute, now)));
        }
        for (const auto& value : PublishedOrthancMetrics(*snapshot, lastMinute.get()))
        {
          OrthancSdk::SetMetricsValue(value.first.c_str(), value.second);
        }
      }
      catch (...)
      {
        // Orthanc's metrics go without ours this time; nothing may escape into Orthanc.
      }
    }
  }


  void RegisterPublishedOrthancMetrics(const PluginStatus& status)
  {
    publishedStatus = &status;
    OrthancSdk::RegisterRefreshMetrics(RefreshPublishedMetrics);
  }
}
