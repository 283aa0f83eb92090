// What the plugin itself costs Orthanc, in CPU time: inside each of its ingest callbacks, from entry
// to return, the SDK calls it makes into Orthanc included, plus every thread the plugin started (the
// IngestWatcher), so that an operator sees in the running Orthanc, not only in a benchmark, that the
// observer does not weigh on what it observes.
//
// Thread CPU time (CLOCK_THREAD_CPUTIME_ID), not wall time: a preemption inside a timed call counts
// nothing. That clock is a system call (no vDSO for CPU clocks), about 400 ns of CPU here against
// 35 ns for CLOCK_MONOTONIC, so only sampled calls read it: on each thread, one call in
// kSamplingPeriod (two reads, about 50 ns per call averaged). Deterministic, and the period is a
// prime, so that the sample rotates through the 4 to 6 callbacks one instance makes on a thread (a
// period of 16 would time every 4th instance's OnStored and nothing else of a C-STORE). Totals are
// the timed calls times the period; /perf/stats says so. Each timed call is corrected by what two
// back-to-back reads of the clock measure (the clock's own share of the interval).
//
// Beside the CPU time, the wall time of every callback on a storing thread is summed per instance
// (a monotonic clock at each return) and recorded at its OnStored: how long each instance kept
// Orthanc's threads inside this plugin, which is where Orthanc holds its process-wide plugin locks
// (the filters under one mutex, OnStored under another), preemptions included.
//
// Not covered: Orthanc's own work to dispatch a callback, and the opt-in modes that do Orthanc's
// work in its place (TimedStorage writes the files; a Delegate transcode runs the transcoder): that
// work is Orthanc's cost, timed as a phase, and excluded here. The REST routes are the cost of
// whoever reads them (docs/measurements/plugin-cost.md measures them).
#pragma once

#include "Metrics/Histogram.h"

#include <algorithm>
#include <array>
#include <atomic>
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
    StoredInstance,
    Change,
    Count
  };

  constexpr size_t kCallbackCount = static_cast<size_t>(Callback::Count);

  // The names of the hooks in /perf/stats ("hooks" and "pluginCost" use the same ones).
  const char* CallbackName(Callback callback);

  // The CPU time of a thread the plugin started, as the thread reads it itself, since the start or
  // the last reset.
  struct PluginThreadCost
  {
    bool running = false;
    int64_t activeCpuNs = 0;  // while Orthanc ingests and the few ticks after
    uint64_t ticks = 0;       // ticks run in that time
    int64_t idleCpuNs = 0;    // wakes that found Orthanc idle (nothing to do)
    uint64_t idleWakes = 0;
  };

  struct PluginCostSnapshot
  {
    std::array<HistogramSnapshot, kCallbackCount> callbacks;  // the timed calls
    HistogramSnapshot insidePerInstance;                      // wall ns in the callbacks, per stored instance
    PluginThreadCost watcher;

    // The callbacks' estimated CPU time: the timed calls times the period.
    uint64_t CallbacksNs() const;
    // Callbacks and the plugin's thread while Orthanc ingests: the cost of ingest. Idle apart.
    uint64_t IngestNs() const;
  };

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

    // One histogram record of a timed call (thread CPU ns, the clock's own share taken out by the
    // caller: ThreadCpuClockShareNs).
    void Record(Callback callback, int64_t cpuNs);

    // Hot path, at each callback's return on a storing thread: its wall time, summed for the
    // thread's instance; `stored` (OnStored) records the sum and starts the next one's.
    void AddInside(int64_t wallNs, bool stored)
    {
      int64_t& inside = PendingInsideNs();
      inside += wallNs;
      if (stored)
      {
        insidePerInstance_.Record(std::max<int64_t>(0, inside));
        inside = 0;
      }
    }

    void Reset();

    PluginCostSnapshot Snapshot() const;

  private:
    static int64_t& PendingInsideNs()
    {
      static thread_local int64_t pending = 0;
      return pending;
    }

    std::array<Histogram, kCallbackCount> callbacks_;
    Histogram insidePerInstance_;
  };
}
