// What a thread of Orthanc is doing now, as the kernel tells it in /proc/self/task/<tid>/syscall:
// running, or blocked in which system call, on which descriptor or futex. Orthanc gives no hook when
// a store fails or a request ends; the thread that ran it says so by what it does next: back in its
// pool's wait, or serving a connection, it has left the store. Read by the plugin's own thread, for
// the few records open for longer than a second, never on the ingest path; nothing here allocates.
// The file is readable by the process for its own threads (no privilege); where it is missing
// (another kernel), every activity is Unknown and records end as before, at their thread's next event.
#pragma once

#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  struct ThreadActivity
  {
    enum class Kind
    {
      Unknown,  // no such thread (it exited), or the file cannot be read or parsed
      Running,  // on a CPU or ready for one: doing something, nothing more is known
      Blocked,  // in system call `number`, with its arguments
      Faulted   // blocked outside a system call (a page fault, a stop): nothing more is known
    };

    Kind kind = Kind::Unknown;
    long number = -1;  // the system call, when Blocked
    uint64_t arguments[6] = {0, 0, 0, 0, 0, 0};

    // The descriptor a blocked poll, select, read, recv, write or send waits on, -1 for another call
    // (for poll and select: the first descriptor of the set, read from the thread's memory).
    int WaitedDescriptor() const;
    // A futex wait: its address, and whether it has a timeout (a pool's timed wait for work).
    bool IsFutexWait(uint64_t& address, bool& timed) const;
  };

  // Parses the text of /proc/<pid>/task/<tid>/syscall: "running", "-1 sp pc", or "nr a1 ... a6 sp pc"
  // in hexadecimal. Any other text gives Unknown.
  ThreadActivity ParseThreadSyscall(const char* text, size_t length);

  // Reads the activity of thread `tid` of this process now.
  ThreadActivity ReadThreadActivity(uint32_t tid);
}
