// Where a thread's time goes, as the kernel counts it for the calling thread: its CPU time (user and
// kernel, CLOCK_THREAD_CPUTIME_ID) and its run delay, the time it was ready to run but waited for a
// CPU (the scheduler's sched_info, /proc/thread-self/schedstat, second field). Between two readings
// on one thread, the wall time less both is the time it was blocked (disk, network, a lock, a
// sleep). Both are system calls (about 0.4 and 1.4 us here), so the timeline reads them for one
// instance in PhasePartsSampling per thread only. The schedstat file is opened once per thread and
// read again at offset 0 (the kernel formats it anew at each read); where the kernel has no
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

  // The calling thread's clocks. `schedstatFd` is the thread's own descriptor of its schedstat file:
  // -1 the first time (opened here and kept), kNoSchedstat once it could not be opened or read (not
  // tried again). The caller closes it with CloseThreadClocks when the thread is done with it.
  constexpr int kNoSchedstat = -2;
  void ReadThreadClocks(int& schedstatFd, ThreadClockReading& reading);
  void CloseThreadClocks(int& schedstatFd);

  // The run delay (second number) of a schedstat text "<cpu ns> <run delay ns> <timeslices>\n";
  // false for any other text, and for "0 0 0", what a kernel whose sched_info is off prints for a
  // thread that has run (no CPU time: no figure either).
  bool ParseSchedstatRunDelay(const char* text, size_t length, int64_t& runDelayNs);

  // Why the run delay cannot be read on this host, nullptr when it can (checked once, on the calling
  // thread: the kernel's sched_info is the same for every thread).
  const char* RunDelayUnavailableReason();
}
