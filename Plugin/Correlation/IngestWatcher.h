// The plugin's one thread. It sleeps in epoll_wait on an eventfd while Orthanc does not ingest, and
// once a second while Orthanc ingests (the records opened by its threads moved in the last
// kQuietTicks seconds, or a hook woke it after an idle period: WakeIfSleeping) it samples the
// established connections to DicomPort and HttpPort, hands the DICOM ones over (DicomConnections),
// and runs `tick` (the ingest state concludes the records whose store has ended, assesses the storage).
// What it reads is Orthanc's own descriptors, never the host's TCP table: its cost is that of
// Orthanc's sockets, whatever the host holds besides. Samples are kept an hour in fixed memory
// (kCapacity of 16 bytes), under a mutex that only readers of the summary share. The thread reads its
// own CPU time after each wake (CLOCK_THREAD_CPUTIME_ID, once a second at most while Orthanc ingests):
// the plugin's thread in /perf/stats pluginCost, ticks apart from the wakes that found Orthanc idle.
#pragma once

#include "Correlation/ProcessSockets.h"
#include "Metrics/PluginCost.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace IngestPerf
{
  struct ConnectionSample
  {
    int64_t ns = 0;  // monotonic
    uint32_t dicom = 0;
    uint32_t http = 0;
  };

  struct ConnectionSummary
  {
    uint64_t samples = 0;
    uint32_t dicomMax = 0;
    double dicomMean = 0;
    uint32_t httpMax = 0;
    double httpMean = 0;
    // The samples with more connections than the given pool size.
    uint64_t dicomOverThreads = 0;
    uint64_t httpOverThreads = 0;
    ConnectionSample last;  // the newest sample of the span (ns 0: none)
  };

  class IngestWatcher
  {
  public:
    static constexpr int64_t kPeriodNs = 1000 * 1000000LL;
    static constexpr size_t kCapacity = 3600;  // one hour
    static constexpr int kQuietTicks = 4;      // ticks after the last activity seen

    struct Hooks
    {
      // A number that moves while Orthanc ingests (records opened by its threads).
      std::function<uint64_t()> activity;
      // The established sockets of the DICOM port just read. Returns whether one of them was new.
      std::function<bool(const std::vector<SocketInfo>& dicom, int64_t nowNs)> dicomSockets;
      // Once per tick while Orthanc ingests, after the sample.
      std::function<void(int64_t nowNs)> tick;
      // On the thread, after RequestMemoryRelease (the memory a large REST answer freed).
      std::function<void()> releaseMemory;
      // Lists the sockets of the two ports (ForEachProcessSocket by default; tests inject theirs).
      std::function<bool(uint16_t dicomPort, uint16_t httpPort, std::vector<SocketInfo>& sockets)> read;
    };

    IngestWatcher(uint16_t dicomPort, uint16_t httpPort, Hooks hooks);
    ~IngestWatcher();
    IngestWatcher(const IngestWatcher&) = delete;
    IngestWatcher& operator=(const IngestWatcher&) = delete;

    void Start();
    void Stop();  // joins the thread; idempotent

    // From a hook when Orthanc starts ingesting: one relaxed load, and a write to an eventfd only
    // if the thread sleeps (once per idle period).
    void WakeIfSleeping();

    // From a REST handler that answered a large body: the thread runs hooks.releaseMemory soon
    // after (an eventfd write), so that the answer does not wait for it. Requests made before
    // the thread ran it are served by one run. A wake for this alone leaves an idle thread idle.
    void RequestMemoryRelease();

    // One tick now, as the thread does (tests call it directly): returns whether it sampled.
    bool Tick(int64_t nowNs);
    // Reads the sockets and hands the DICOM ones over; returns the sample. From the thread (or a
    // test) only: it reuses the thread's lists.
    ConnectionSample ReadSockets(int64_t nowNs);
    void Add(const ConnectionSample& sample);

    // The samples taken from `fromNs` to `toNs` (monotonic).
    ConnectionSummary Summarize(int64_t fromNs, int64_t toNs, unsigned int dicomThreads,
                                unsigned int httpThreads) const;

    uint64_t Wakes() const { return wakes_.load(std::memory_order_relaxed); }

    // The thread's CPU time since it started or since ResetCost.
    PluginThreadCost Cost() const;
    void ResetCost();

  private:
    void Run();
    // The CPU time of one pass of the loop: to the ticks, or to the wakes that found Orthanc idle.
    void Account(int64_t cpuNs, bool ticked);

    const uint16_t dicomPort_;
    const uint16_t httpPort_;
    Hooks hooks_;
    uint64_t lastActivity_ = 0;
    int quietTicks_ = 0;               // active for kQuietTicks ticks at start: Orthanc opens its DICOM port then
    std::vector<SocketInfo> sockets_;  // ReadSockets' lists, the thread's own
    std::vector<SocketInfo> dicomSockets_;
    mutable std::mutex mutex_;
    std::vector<ConnectionSample> ring_;
    size_t next_ = 0;
    size_t held_ = 0;
    std::atomic<bool> memoryReleaseWanted_{false};
    int epoll_ = -1;
    int wake_ = -1;  // eventfd
    std::atomic<bool> sleeping_{false};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> running_{false};
    std::atomic<uint64_t> wakes_{0};
    struct CostCounters
    {
      std::atomic<int64_t> activeCpuNs{0};
      std::atomic<uint64_t> ticks{0};
      std::atomic<int64_t> idleCpuNs{0};
      std::atomic<uint64_t> idleWakes{0};
      std::atomic<int64_t> answerMemoryCpuNs{0};
      std::atomic<uint64_t> answerMemoryReleases{0};
    };
    CostCounters cost_;
    CostCounters costAtReset_;
    std::thread thread_;
  };

  // The watcher of the running plugin, null when none runs (the routes read its samples).
  void SetActiveIngestWatcher(IngestWatcher* watcher);
  IngestWatcher* ActiveIngestWatcher();
}
