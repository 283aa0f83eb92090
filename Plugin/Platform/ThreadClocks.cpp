#include "Platform/ThreadClocks.h"

#include "Platform/MonotonicClock.h"

#include <fcntl.h>
#include <unistd.h>

namespace IngestPerf
{
  namespace
  {
    // Unsigned decimal digits at `text[i]`, then `i` past them; false when there is none.
    bool ParseNumber(const char* text, size_t length, size_t& i, int64_t& value)
    {
      const size_t start = i;
      uint64_t number = 0;
      while (i < length && text[i] >= '0' && text[i] <= '9')
      {
        if (number > (static_cast<uint64_t>(INT64_MAX) - 9) / 10)
        {
          return false;
        }
        number = number * 10 + static_cast<uint64_t>(text[i] - '0');
        i++;
      }
      value = static_cast<int64_t>(number);
      return i > start;
    }

    bool ReadRunDelay(int fd, int64_t& runDelayNs)
    {
      char text[96];
      const ssize_t length = pread(fd, text, sizeof(text), 0);
      return length > 0 && ParseSchedstatRunDelay(text, static_cast<size_t>(length), runDelayNs);
    }
  }


  bool ParseSchedstatRunDelay(const char* text, size_t length, int64_t& runDelayNs)
  {
    size_t i = 0;
    int64_t cpu = 0;
    int64_t delay = 0;
    int64_t slices = 0;
    if (!ParseNumber(text, length, i, cpu) || i >= length || text[i] != ' ')
    {
      return false;
    }
    i++;
    if (!ParseNumber(text, length, i, delay) || i >= length || text[i] != ' ')
    {
      return false;
    }
    i++;
    // Nothing after the third number but one newline.
    if (!ParseNumber(text, length, i, slices) || (i < length && (text[i] != '\n' || i + 1 != length)))
    {
      return false;
    }
    if (cpu == 0)
    {
      return false;  // sched_info off: the kernel prints zeros
    }
    runDelayNs = delay;
    return true;
  }


  void ReadThreadClocks(ThreadClockReading& reading)
  {
    reading.cpuNs = ThreadCpuNowNs();
    reading.runDelayNs = ThreadClockReading::kUnknown;
    if (RunDelayUnavailableReason() != nullptr)
    {
      return;
    }
    const int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    int64_t delay = 0;
    if (fd >= 0 && ReadRunDelay(fd, delay))
    {
      reading.runDelayNs = delay;
    }
    if (fd >= 0)
    {
      close(fd);
    }
  }


  const char* RunDelayUnavailableReason()
  {
    static const char* const reason = []() -> const char* {
      const int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
      if (fd < 0)
      {
        return "the kernel gives no run delay of a thread (no /proc/thread-self/schedstat: a kernel built "
               "without CONFIG_SCHED_INFO, or no /proc): waiting for a CPU is counted in blocked";
      }
      int64_t delay = 0;
      const bool readable = ReadRunDelay(fd, delay);
      close(fd);
      return readable ? nullptr
                      : "the kernel's /proc/thread-self/schedstat does not read as '<cpu> <run delay> <slices>': "
                        "waiting for a CPU is counted in blocked";
    }();
    return reason;
  }
}
