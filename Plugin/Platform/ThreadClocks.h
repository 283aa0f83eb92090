// Where a thread's time goes, as the kernel counts it for the calling thread: its CPU time (user and
// kernel, CLOCK_THREAD_CPUTIME_ID) and its run delay, the time it was ready to run but waited for a
// CPU (the scheduler's sched_info, /proc/thread-self/schedstat, second field). Between two readings
// on one thread, the wall time less both is the time it was blocked (disk, network, a lock, a
// sleep). The timeline reads them for one instance in PhasePartsSampling per thread only. The
// schedstat file is opened, read and closed at each reading (about 7.5 us here, against 1.1 us for a
// read of a file kept open): a file kept open per thread was one descriptor of Orthanc's for each of
// its threads (59 more than Orthanc's own 8 in the soak), each of them listed and asked again at every
// reading of Orthanc's sockets (ProcessSockets, about 2.3 us per descriptor). Where the kernel has no
// sched_info (CONFIG_SCHED_INFO off, or no /proc), the run delay is unknown and the reading says so.
// Nothing here allocates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  struct ThreadClockReading
  {
    static constexpr int64_t kUnknown = -1;

    int64_t cpuNs = kUnknown;       // the thread's CPU time since it started
    int64_t runDelayNs = kUnknown;  // the thread's time waiting for a CPU since it started

    bool HasCpu() const { return cpuNs != kUnknown; }
    bool HasRunDelay() const { return runDelayNs != kUnknown; }
  };

  // The calling thread's clocks: its CPU time, and its run delay unless RunDelayUnavailableReason.
  void ReadThreadClocks(ThreadClockReading& reading);

  // The run delay (second number) of a schedstat text "<cpu ns> <run delay ns> <timeslices>\n";
  // false for any other text, and for "0 0 0", what a kernel whose sched_info is off prints for a
  // thread that has run (no CPU time: no figure either).
  bool ParseSchedstatRunDelay(const char* text, size_t length, int64_t& runDelayNs);

  // Why the run delay cannot be read on this host, nullptr when it can (checked once, on the calling
  // thread: the kernel's sched_info is the same for every thread).
  const char* RunDelayUnavailableReason();
}
