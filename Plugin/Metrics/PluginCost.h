// What the plugin itself costs Orthanc: the time spent inside each of its ingest callbacks, from
// entry to return, the SDK calls it makes into Orthanc included, so that an operator sees in the
// running Orthanc, not only in a benchmark, that the observer does not weigh on what it observes.
//
// Sampled: on each thread, one call in kSamplingPeriod is timed (a second clock read and a
// histogram record, about 40 ns; timing every call would add a third to the plugin's own hot
// path). Deterministic, and the period is a prime, so that the sample rotates through the 4 to 6
// callbacks one instance makes on a thread (a period of 16 would time every 4th instance's
// OnStored and nothing else of a C-STORE). Totals are the timed calls times the period;
// /perf/stats says so.
//
// Not covered: Orthanc's own work to dispatch a callback, and the opt-in modes that do Orthanc's
// work in its place (TimedStorage writes the files; a Delegate transcode runs the transcoder): that work is Orthanc's
// cost, timed as a phase, and excluded here.
#pragma once

#include "Metrics/Histogram.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  enum class Callback
  {
    HttpRequestFilter,
    ReceivedInstance,
    Transcoder,
    InstanceFilter,
    CStoreFilter,
    StoredInstance,
    Change,
    Count
  };

  constexpr size_t kCallbackCount = static_cast<size_t>(Callback::Count);

  // The names of the hooks in /perf/stats ("hooks" and "pluginCost" use the same ones).
  const char* CallbackName(Callback callback);

  class PluginCost
  {
  public:
    PluginCost();
    PluginCost(const PluginCost&) = delete;
    PluginCost& operator=(const PluginCost&) = delete;

    static constexpr uint32_t kSamplingPeriod = 17;

    // Hot path: whether this call of a callback on this thread is one of the timed ones.
    static bool SampleThisCall()
    {
      static thread_local uint32_t calls = 0;
      return (++calls % kSamplingPeriod) == 0;
    }

    // One histogram record.
    void Record(Callback callback, int64_t durationNs) { callbacks_[static_cast<size_t>(callback)].Record(durationNs); }

    void Reset();

    std::array<HistogramSnapshot, kCallbackCount> Snapshot() const;

  private:
    std::array<Histogram, kCallbackCount> callbacks_;
  };
}
