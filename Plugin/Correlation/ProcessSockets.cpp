#include "Correlation/ProcessSockets.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#ifndef SO_COOKIE
#define SO_COOKIE 57  // Linux 4.12; older C library headers lack it
#endif

namespace IngestPerf
{
  namespace
  {
    // The port and, for a connected socket, the address of a sockaddr, or false for another family.
    bool ReadAddress(const sockaddr_storage& address, uint16_t& port, char* text, size_t capacity)
    {
      if (address.ss_family == AF_INET)
      {
        const sockaddr_in& v4 = reinterpret_cast<const sockaddr_in&>(address);
        port = ntohs(v4.sin_port);
        return text == nullptr || inet_ntop(AF_INET, &v4.sin_addr, text, static_cast<socklen_t>(capacity)) != nullptr;
      }
      if (address.ss_family == AF_INET6)
      {
        const sockaddr_in6& v6 = reinterpret_cast<const sockaddr_in6&>(address);
        port = ntohs(v6.sin6_port);
        if (text == nullptr)
        {
          return true;
        }
        if (IN6_IS_ADDR_V4MAPPED(&v6.sin6_addr))
        {
          // As Orthanc and DCMTK name the peer of an IPv4 client on a dual-stack socket.
          return inet_ntop(AF_INET, &v6.sin6_addr.s6_addr[12], text, static_cast<socklen_t>(capacity)) != nullptr;
        }
        return inet_ntop(AF_INET6, &v6.sin6_addr, text, static_cast<socklen_t>(capacity)) != nullptr;
      }
      return false;
    }

    struct LinuxDirent64
    {
      uint64_t inode;
      int64_t offset;
      unsigned short length;
      unsigned char type;
      char name[1];
    };

    // An entry of /proc/self/fd: the header, a descriptor number of up to 10 digits and its NUL,
    // rounded up to 8 bytes (32), with room to spare.
    constexpr size_t kLargestEntry = 64;

    int OpenFdDirectory()
    {
      return open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }

    // /proc/self/fd, opened once and rewound for each reading: opening it walks the path and makes
    // the kernel resolve "self" and build its entries anew, 40 us of a 100 us reading made once a
    // second by a thread that slept in between (measured on a loaded 2-core VM). One reading at a
    // time uses it; a reading that finds it in use (a new association's, on Orthanc's thread, at the
    // same moment as the plugin's thread) opens its own, as before, and never waits.
    class KeptFdDirectory
    {
    public:
      ~KeptFdDirectory()
      {
        const int fd = fd_.load(std::memory_order_relaxed);
        if (fd >= 0)
        {
          close(fd);
        }
      }

      // The kept descriptor at its start, or -1 when another reading holds it or it cannot be had.
      int Take()
      {
        if (busy_.exchange(true, std::memory_order_acquire))
        {
          return -1;
        }
        int fd = fd_.load(std::memory_order_relaxed);
        if (fd >= 0 && lseek(fd, 0, SEEK_SET) != 0)
        {
          close(fd);
          fd = -1;
        }
        if (fd < 0)
        {
          fd = OpenFdDirectory();
          fd_.store(fd, std::memory_order_relaxed);
        }
        if (fd < 0)
        {
          busy_.store(false, std::memory_order_release);
        }
        return fd;
      }

      void Give() { busy_.store(false, std::memory_order_release); }

    private:
      std::atomic<int> fd_{-1};
      std::atomic<bool> busy_{false};
    };

    KeptFdDirectory keptFdDirectory;
  }


  uint64_t SocketCookie(int fd)
  {
    uint64_t cookie = 0;
    socklen_t length = sizeof(cookie);
    if (getsockopt(fd, SOL_SOCKET, SO_COOKIE, &cookie, &length) != 0)
    {
      return 0;
    }
    return cookie;
  }


  bool DescribeSocket(int fd, uint16_t portA, uint16_t portB, SocketInfo& info)
  {
    sockaddr_storage local{};
    socklen_t length = sizeof(local);
    uint16_t port = 0;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length) != 0 || !ReadAddress(local, port, nullptr, 0) ||
        (portA != 0 && port != portA && port != portB))
    {
      return false;  // not a socket (ENOTSOCK: most descriptors), not IP, or another port
    }
    tcp_info tcp{};
    socklen_t tcpLength = sizeof(tcp);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &tcp, &tcpLength) != 0)
    {
      return false;  // UDP, or closed meanwhile
    }
    info = SocketInfo();
    info.fd = fd;
    info.localPort = port;
    // What SO_ACCEPTCONN would say of a TCP socket, without its system call.
    info.listening = tcp.tcpi_state == kTcpListen;
    info.state = tcp.tcpi_state;
    info.msSinceDataSent = tcp.tcpi_last_data_sent;
    info.msSinceDataReceived = tcp.tcpi_last_data_recv;
    if (!info.listening)
    {
      info.cookie = SocketCookie(fd);
      sockaddr_storage peer{};
      socklen_t peerLength = sizeof(peer);
      if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0 ||
          !ReadAddress(peer, info.peerPort, info.peer, sizeof(info.peer)))
      {
        info.peer[0] = '\0';  // not connected (any more)
        info.peerPort = 0;
      }
    }
    return true;
  }


  bool VisitProcessSockets(uint16_t portA, uint16_t portB, SocketVisitor visit, void* context)
  {
    const int kept = keptFdDirectory.Take();
    const int directory = kept >= 0 ? kept : OpenFdDirectory();
    if (directory < 0)
    {
      return false;
    }
    alignas(8) char buffer[4096];
    for (;;)
    {
      const long read = syscall(SYS_getdents64, directory, buffer, sizeof(buffer));
      if (read <= 0)
      {
        break;
      }
      for (long offset = 0; offset < read;)
      {
        const LinuxDirent64* entry = reinterpret_cast<const LinuxDirent64*>(buffer + offset);
        offset += entry->length;
        int fd = 0;
        const char* digit = entry->name;
        if (*digit < '0' || *digit > '9')
        {
          continue;  // "." and ".."
        }
        for (; *digit >= '0' && *digit <= '9'; digit++)
        {
          fd = fd * 10 + (*digit - '0');
        }
        SocketInfo socket;
        if (fd != directory && DescribeSocket(fd, portA, portB, socket))
        {
          visit(socket, context);
        }
      }
      // The kernel lists a process's descriptors until the next entry does not fit: with room for
      // one more left, the listing is complete, and the call that would return 0 is saved.
      if (static_cast<size_t>(read) + kLargestEntry <= sizeof(buffer))
      {
        break;
      }
    }
    if (kept >= 0)
    {
      keptFdDirectory.Give();
    }
    else
    {
      close(directory);
    }
    return true;
  }
}
