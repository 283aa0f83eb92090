// The plugin's one thread, named "ingest-perf". It sleeps in epoll_wait on an eventfd while Orthanc
// does not ingest, and once a second while Orthanc ingests (the records opened by its threads moved
// in the last kQuietTicks seconds, or a hook woke it after an idle period: WakeIfSleeping) it reads
// the connections to DicomPort and HttpPort from Orthanc's own descriptors (ProcessSockets), hands
// them over (socketsRead), counts them, and runs `tick` (the ingest state concludes the records
// whose store has ended, assesses the storage). A C-STORE instance whose association the last
// reading did not know asks for another one (RequestReading), at most every kReadingPeriodNs.
// Each C-STORE instance, at Orthanc's instance filter, asks for a check of the known associations
// (RequestCheck, one system call each): while Orthanc stores it, an association that closed is seen
// and the new one read. Its OnStored names its connection if that check has run (CheckedSince), else
// it is named after the check, as of when it was stored (IngestRecorder::Drain holds it until then).
// Once Orthanc has started (every plugin has loaded), it runs `orthancStarted` (the single-owner hooks
// the plugin was asked to take).
//
// The thread wakes when asked rather than on a timer: the hooks' requests (an eventfd write each,
// coalesced until the thread has served it) also bring the tick when it is due (TickIfDue). A timed
// wake costs about 45 us of CPU in a virtual machine, against 11 us for a signalled one: timers are
// left to the ticks no instance brought (kTickGraceNs after they were due: the quiet ticks after
// ingest) and to readings asked for sooner than kReadingPeriodNs after the last.
//
// Everything that costs more than a clock and the plugin's own memory runs here, never on Orthanc's
// threads, and holds nothing Orthanc waits for. What it reads is Orthanc's own descriptors, never the
// host's TCP table. Counts are kept an hour in fixed memory (kCapacity of 16 bytes), under a mutex
// that only readers of the summary share. The thread reads its own CPU time after each wake
// (CLOCK_THREAD_CPUTIME_ID): the plugin's thread in /perf/stats pluginCost, ticks apart from the wakes
// that found Orthanc idle.
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
    static constexpr int64_t kReadingPeriodNs = 50 * 1000000LL;  // readings on request, at most
    static constexpr int64_t kTickGraceNs = 250 * 1000000LL;     // a due tick no hook brought: on a timer
    static constexpr size_t kCapacity = 3600;                    // one hour
    static constexpr int kQuietTicks = 4;                        // ticks after the last activity seen

    struct Hooks
    {
      // A number that moves while Orthanc ingests (records opened by its threads).
      std::function<uint64_t()> activity;
      // The connected sockets of the two ports just read (DicomPort's first), at nowNs.
      std::function<void(const std::vector<SocketInfo>& sockets, int64_t nowNs)> socketsRead;
      // Once per tick while Orthanc ingests, after the reading.
      std::function<void(int64_t nowNs)> tick;
      // On request (RequestDrain), and with the checks: records the stored instances Orthanc's
      // threads left.
      std::function<void()> drain;
      // Once, after OrthancStarted.
      std::function<void()> orthancStarted;
      // On request (RequestCheck): a cheap check of the DICOM connections known (one system call
      // each); returns whether one closed (a reading follows: the new association is read).
      std::function<bool(int64_t nowNs)> checkConnections;
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
    // From a hook while Orthanc ingests: two relaxed loads, and an eventfd write once the tick is due
    // (once per tick).
    void TickIfDue(int64_t nowNs);
    // From a hook that needs a newer reading of the connections (a C-STORE instance from a peer
    // with no known association): an eventfd write, once per reading; the thread reads at most every
    // kReadingPeriodNs (later if it read less than that ago).
    void RequestReading(int64_t nowNs);
    // From Orthanc's OrthancStarted change: the thread runs hooks.orthancStarted once.
    void OrthancStarted();
    // From a hook whose queue for the thread has grown: an eventfd write, once per drain.
    void RequestDrain();
    // From a C-STORE instance at Orthanc's instance filter: an eventfd write, once per check (the
    // instances that arrive before the thread has served it share it).
    void RequestCheck();
    // Whether a check of the connections that started at or after `ns` has ended (the table holds
    // what it found): one load.
    bool CheckedSince(int64_t ns) const { return checkedFromNs_.load(std::memory_order_acquire) >= ns; }

    // One tick now, as the thread does (tests call it directly): returns whether it read.
    bool Tick(int64_t nowNs);
    // Reads the sockets and hands them over; returns the counts. From the thread (or a test) only:
    // it reuses the thread's list.
    ConnectionSample ReadSockets(int64_t nowNs);
    void Add(const ConnectionSample& sample);

    // The samples taken from `fromNs` to `toNs` (monotonic).
    ConnectionSummary Summarize(int64_t fromNs, int64_t toNs, unsigned int dicomThreads,
                                unsigned int httpThreads) const;

    // The thread's CPU time since it started or since ResetCost.
    PluginThreadCost Cost() const;
    void ResetCost();

  private:
    void Run();
    // Checks the known associations, reads the connections if one closed.
    void CheckConnections(int64_t nowNs);
    // When the thread must wake next (INT64_MAX: only when signalled).
    int64_t NextWakeNs(bool idle, int64_t nextTickNs) const;
    void Signal();  // an eventfd write
    // Raises `wanted` and signals, unless it was up already (the thread has not served it yet).
    void SignalOnce(std::atomic<bool>& wanted);
    // The CPU time of one pass of the loop: to ingest's (active: Orthanc ingests, or the pass served
    // a request; ticked: it ran a tick), or to the wakes that found Orthanc idle.
    void Account(int64_t cpuNs, bool active, bool ticked);

    const uint16_t dicomPort_;
    const uint16_t httpPort_;
    Hooks hooks_;
    uint64_t lastActivity_ = 0;
    int quietTicks_ = 0;               // active for kQuietTicks ticks at start: Orthanc opens its DICOM port then
    std::vector<SocketInfo> sockets_;  // ReadSockets' list, the thread's own
    mutable std::mutex mutex_;
    std::vector<ConnectionSample> ring_;
    size_t next_ = 0;
    size_t held_ = 0;
    std::atomic<int64_t> lastReadingNs_{0};
    std::atomic<int64_t> checkedFromNs_{0};      // when the last check that has ended started
    std::atomic<int64_t> tickDueNs_{INT64_MAX};  // INT64_MAX while idle: the hooks wake it then
    std::atomic<bool> readingWanted_{false};
    std::atomic<bool> checkWanted_{false};
    std::atomic<bool> tickWanted_{false};
    std::atomic<bool> startedWanted_{false};
    std::atomic<bool> drainWanted_{false};
    int epoll_ = -1;
    int wake_ = -1;  // eventfd
    std::atomic<bool> sleeping_{false};
    std::atomic<bool> stopping_{false};
    std::atomic<bool> running_{false};
    struct CostCounters
    {
      std::atomic<int64_t> activeCpuNs{0};
      std::atomic<uint64_t> ticks{0};
      std::atomic<int64_t> idleCpuNs{0};
      std::atomic<uint64_t> idleWakes{0};
    };
    CostCounters cost_;
    CostCounters costAtReset_;
    std::thread thread_;
  };

  // The watcher of the running plugin, null when none runs (the routes read its samples).
  void SetActiveIngestWatcher(IngestWatcher* watcher);
  IngestWatcher* ActiveIngestWatcher();
}
