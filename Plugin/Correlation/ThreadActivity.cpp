#include "Correlation/ThreadActivity.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <string_view>

namespace IngestPerf
{
  namespace
  {
    // Reads `length` bytes at `address` of this process without trusting the address: the thread may
    // have returned from the call and reused its stack meanwhile (the bytes are then stale, never a
    // fault: process_vm_readv fails on an unmapped address).
    bool ReadOwnMemory(uint64_t address, void* target, size_t length)
    {
      iovec local{target, length};
      iovec remote{reinterpret_cast<void*>(static_cast<uintptr_t>(address)), length};
      return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(length);
    }

    bool ParseHex(const char*& p, const char* end, uint64_t& value)
    {
      while (p < end && *p == ' ')
      {
        p++;
      }
      if (end - p >= 2 && p[0] == '0' && p[1] == 'x')
      {
        p += 2;
      }
      const char* start = p;
      value = 0;
      for (; p < end; p++)
      {
        const char c = *p;
        int digit;
        if (c >= '0' && c <= '9')
        {
          digit = c - '0';
        }
        else if (c >= 'a' && c <= 'f')
        {
          digit = c - 'a' + 10;
        }
        else if (c >= 'A' && c <= 'F')
        {
          digit = c - 'A' + 10;
        }
        else
        {
          break;
        }
        if (p - start >= 16)
        {
          return false;  // more than 64 bits
        }
        value = (value << 4) | static_cast<uint64_t>(digit);
      }
      return p > start;
    }
  }


  ThreadActivity ParseThreadSyscall(const char* text, size_t length)
  {
    ThreadActivity activity;
    const char* p = text;
    const char* end = text + length;
    while (end > p && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\0'))
    {
      end--;
    }
    if (end - p == 7 && std::string_view(p, 7) == "running")
    {
      activity.kind = ThreadActivity::Kind::Running;
      return activity;
    }
    if (end - p >= 2 && p[0] == '-' && p[1] == '1')
    {
      activity.kind = ThreadActivity::Kind::Faulted;
      return activity;
    }
    // The number is decimal, the arguments, stack pointer and program counter hexadecimal.
    long number = 0;
    const char* start = p;
    for (; p < end && *p >= '0' && *p <= '9' && p - start < 6; p++)
    {
      number = number * 10 + (*p - '0');
    }
    if (p == start || p >= end || *p != ' ')
    {
      return activity;
    }
    uint64_t values[8];
    for (uint64_t& value : values)
    {
      if (!ParseHex(p, end, value))
      {
        return activity;
      }
    }
    if (p != end)
    {
      return activity;
    }
    activity.kind = ThreadActivity::Kind::Blocked;
    activity.number = number;
    for (size_t i = 0; i < 6; i++)
    {
      activity.arguments[i] = values[i];
    }
    return activity;
  }


  int ThreadActivity::WaitedDescriptor() const
  {
    if (kind != Kind::Blocked)
    {
      return -1;
    }
    switch (number)
    {
      case SYS_read:
      case SYS_readv:
      case SYS_recvfrom:
      case SYS_recvmsg:
      case SYS_write:
      case SYS_writev:
      case SYS_sendto:
      case SYS_sendmsg:
        return arguments[0] <= 0x7fffffff ? static_cast<int>(arguments[0]) : -1;

      case SYS_poll:
      case SYS_ppoll:
      {
        pollfd first{};
        if (arguments[1] == 0 || !ReadOwnMemory(arguments[0], &first, sizeof(first)))
        {
          return -1;
        }
        return first.fd;
      }

      case SYS_select:
      case SYS_pselect6:
      {
        // The lowest descriptor of the read set, then of the write set.
        const uint64_t count = arguments[0] > FD_SETSIZE ? FD_SETSIZE : arguments[0];
        for (size_t set = 1; set <= 2; set++)
        {
          fd_set descriptors;
          FD_ZERO(&descriptors);
          if (arguments[set] == 0 || !ReadOwnMemory(arguments[set], &descriptors, (count + 7) / 8))
          {
            continue;
          }
          for (int fd = 0; fd < static_cast<int>(count); fd++)
          {
            if (FD_ISSET(fd, &descriptors))
            {
              return fd;
            }
          }
        }
        return -1;
      }

      default:
        return -1;
    }
  }


  bool ThreadActivity::IsFutexWait(uint64_t& address, bool& timed) const
  {
    if (kind != Kind::Blocked || number != SYS_futex)
    {
      return false;
    }
    const uint64_t operation = arguments[1] & 0x7f;  // without FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME
    constexpr uint64_t kWait = 0;                    // FUTEX_WAIT
    constexpr uint64_t kWaitBitset = 9;              // FUTEX_WAIT_BITSET
    if (operation != kWait && operation != kWaitBitset)
    {
      return false;
    }
    address = arguments[0];
    timed = arguments[3] != 0;
    return true;
  }


  ThreadActivity ReadThreadActivity(uint32_t tid)
  {
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%u/syscall", tid);
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
    {
      return ThreadActivity();
    }
    char text[256];
    const ssize_t length = read(fd, text, sizeof(text));
    close(fd);
    return length > 0 ? ParseThreadSyscall(text, static_cast<size_t>(length)) : ThreadActivity();
  }
}
