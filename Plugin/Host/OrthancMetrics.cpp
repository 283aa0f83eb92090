#include "Host/OrthancMetrics.h"

#include "Platform/MonotonicClock.h"
#include "Platform/OrthancSdk.h"
#include "Recording/IngestState.h"

#include <atomic>
#include <memory>

namespace IngestPerf
{
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
      const double active = static_cast<double>(recent.ActiveSpanNs()) / 1e9;  // as /perf/stats?window=1m
      const double stored = static_cast<double>(recent.outcomes[static_cast<size_t>(Outcome::Stored)]);
      values.emplace_back(prefix + "_instances_per_second_1m", static_cast<float>(active > 0 ? stored / active : 0));
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

    // Orthanc calls it before answering /tools/metrics-prometheus: at most one snapshot a second.
    void RefreshPublishedMetrics()
    {
      try
      {
        IngestState* state = ActiveIngestState();
        const int64_t now = MonotonicNowNs();
        int64_t last = lastPublishedNs.load(std::memory_order_relaxed);
        if (state == nullptr || (last != 0 && now - last < kRefreshPeriodNs) ||
            !lastPublishedNs.compare_exchange_strong(last, now, std::memory_order_relaxed))
        {
          return;
        }
        // The statistics only, not a whole Collect: this runs inside Orthanc's answer to
        // /tools/metrics-prometheus, on an HTTP thread with a small stack. What the hooks queued is
        // recorded first, as every route does (the plugin's thread records it at its next wake).
        state->recorder.Drain();
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
