// Orthanc's own TCP sockets, found among the file descriptors of the process the plugin lives in:
// for each, what the kernel says of it (local port, listening or connected, peer, state, the socket
// cookie, how long since data last went each way). The cost is that of Orthanc's descriptors, one
// getdents64 over /proc/self/fd and a few system calls per socket, whatever else the host holds:
// reading the kernel's TCP table (procfs) made the kernel print every socket of the network
// namespace, 7.5-22 ms on a host with a few thousand of them. Only the plugin's own thread reads them,
// never Orthanc's threads; nothing here allocates. Linux only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace IngestPerf
{
  constexpr size_t kMaxPeerAddressLength = 63;  // an IPv6 address in text, with room to spare

  struct SocketInfo
  {
    int fd = -1;
    // SO_COOKIE: the kernel's number for the socket, unique for the life of the system (Linux 4.12):
    // a new connection has a new cookie even when it reuses the descriptor number of an old one.
    uint64_t cookie = 0;  // 0 for a listening socket
    uint16_t localPort = 0;
    bool listening = false;
    uint8_t state = 0;  // the kernel's TCP state: 1 established, 8 close-wait, 10 listen...
    // Numeric; an IPv4-mapped IPv6 address as IPv4; "" if none (listening).
    char peer[kMaxPeerAddressLength + 1] = {0};
    uint16_t peerPort = 0;
    // From TCP_INFO, in milliseconds before the reading: when the socket last sent and last received
    // data (the kernel counts from the connection's start when nothing went yet).
    uint32_t msSinceDataSent = 0;
    uint32_t msSinceDataReceived = 0;
  };

  constexpr uint8_t kTcpEstablished = 1;
  constexpr uint8_t kTcpListen = 10;

  // Describes `fd` if it is a TCP socket (IPv4 or IPv6) whose local port is `portA` or `portB` (0:
  // any port); false otherwise (not a socket, another protocol or port, closed meanwhile). Two
  // system calls tell the port, the state and the TCP_INFO timings; two more the cookie and the peer
  // of a connection.
  bool DescribeSocket(int fd, uint16_t portA, uint16_t portB, SocketInfo& info);

  // The SO_COOKIE of `fd`, 0 if it is not a socket (closed, say): one system call.
  uint64_t SocketCookie(int fd);

  using SocketVisitor = void (*)(const SocketInfo& socket, void* context);

  // Calls visit for each TCP socket of the process on one of the ports, as DescribeSocket describes
  // it. Returns false when the descriptors cannot be listed (no /proc), true otherwise.
  bool VisitProcessSockets(uint16_t portA, uint16_t portB, SocketVisitor visit, void* context);

  // The same with a callable: visit(const SocketInfo&).
  template <typename Visit>
  bool ForEachProcessSocket(uint16_t portA, uint16_t portB, Visit&& visit)
  {
    using Callable = std::remove_reference_t<Visit>;
    return VisitProcessSockets(
      portA, portB, [](const SocketInfo& socket, void* context) { (*static_cast<Callable*>(context))(socket); },
      const_cast<void*>(static_cast<const void*>(&visit)));
  }
}
