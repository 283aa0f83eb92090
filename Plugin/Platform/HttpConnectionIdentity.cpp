#include "Platform/HttpConnectionIdentity.h"

#include "Platform/Hash.h"

#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace IngestPerf
{
  namespace
  {
    // civetweb's struct mg_request_info (include/civetweb.h, 1.14 to 1.16, x86_64 and aarch64):
    // char remote_addr[48]; long long content_length; int remote_port; int server_port; int is_ssl.
    constexpr size_t kAddressLength = 48;
    constexpr size_t kRemotePortOffset = 56;
    constexpr size_t kServerPortOffset = 60;
    constexpr size_t kIsSslOffset = 64;

    struct Ports
    {
      int remotePort;
      int serverPort;
      int isSsl;
    };

    enum State : int
    {
      kUnconfigured,
      kUnverified,
      kVerifying,
      kVerified,
      kRefused
    };

    // Checks that fail this many times leave the identity refused for good.
    constexpr int kAttempts = 3;

    std::atomic<int> state{kUnconfigured};
    std::atomic<int> failures{0};
    std::atomic<const char*> refusal{nullptr};
    uint16_t httpPort = 0;
    HttpConnectionIdentity::Verifier verifier = nullptr;

    const char* const kNoKeepAlive =
      "Orthanc's KeepAlive is false: every HTTP request comes on a connection of its own, so there is no time "
      "between two requests of one connection";

    // Copies the ports without faulting, whatever `ip` points to (an unmapped address is an error).
    bool CopyPortsSafely(const char* ip, Ports& ports)
    {
      iovec local{&ports, sizeof(ports)};
      iovec remote{const_cast<char*>(ip) + kRemotePortOffset, sizeof(ports)};
      return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof(ports));
    }

    void ReadPorts(const char* ip, Ports& ports)
    {
      memcpy(&ports.remotePort, ip + kRemotePortOffset, sizeof(int));
      memcpy(&ports.serverPort, ip + kServerPortOffset, sizeof(int));
      memcpy(&ports.isSsl, ip + kIsSslOffset, sizeof(int));
    }

    bool Plausible(const char* ip, const Ports& ports)
    {
      return memchr(ip, '\0', kAddressLength) != nullptr && ports.serverPort == httpPort && ports.remotePort > 0 &&
             ports.remotePort <= 65535 && (ports.isSsl == 0 || ports.isSsl == 1);
    }

    void Refuse(const char* reason)
    {
      refusal.store(reason, std::memory_order_relaxed);
      state.store(kRefused, std::memory_order_release);
    }

    // One check, by one thread at a time: the fields copied safely, then the connection they name
    // looked for among Orthanc's own sockets.
    void Verify(const char* ip)
    {
      int expected = kUnverified;
      if (!state.compare_exchange_strong(expected, kVerifying, std::memory_order_acq_rel))
      {
        return;  // another thread checks now, or it is decided
      }
      Ports ports{};
      const bool copied = CopyPortsSafely(ip, ports);
      if (copied && Plausible(ip, ports) && verifier != nullptr &&
          verifier(ip, static_cast<uint16_t>(ports.remotePort), httpPort))
      {
        state.store(kVerified, std::memory_order_release);
        return;
      }
      if (failures.fetch_add(1, std::memory_order_relaxed) + 1 >= kAttempts)
      {
        Refuse(!copied || !Plausible(ip, ports)
                 ? "the HTTP server does not hand the plugin civetweb's request information as Orthanc 1.10 to "
                   "1.12 do (its client's port is not where civetweb 1.14 to 1.16 keep it): the connection of a "
                   "request is not known"
                 : "the client port that civetweb's request information gives is not one of Orthanc's HTTP "
                   "connections: the connection of a request is not known");
        return;
      }
      state.store(kUnverified, std::memory_order_release);
    }
  }


  void HttpConnectionIdentity::Configure(uint16_t port, bool keepAlive, Verifier check)
  {
    httpPort = port;
    verifier = check;
    failures.store(0, std::memory_order_relaxed);
    refusal.store(nullptr, std::memory_order_relaxed);
    if (keepAlive)
    {
      state.store(kUnverified, std::memory_order_release);
    }
    else
    {
      Refuse(kNoKeepAlive);
    }
  }


  uint64_t HttpConnectionIdentity::Identify(const char* ip)
  {
    if (ip == nullptr)
    {
      return 0;
    }
    int current = state.load(std::memory_order_acquire);
    if (current == kUnverified)
    {
      Verify(ip);
      current = state.load(std::memory_order_acquire);
    }
    if (current != kVerified)
    {
      return 0;
    }
    Ports ports;
    ReadPorts(ip, ports);
    if (!Plausible(ip, ports))
    {
      return 0;
    }
    // A key of the address and the client's port, never 0.
    return (HashKey(ip) * 65537) ^ static_cast<uint64_t>(ports.remotePort) ^ (uint64_t(1) << 63);
  }


  const char* HttpConnectionIdentity::UnknownReason()
  {
    switch (state.load(std::memory_order_acquire))
    {
      case kRefused:
        return refusal.load(std::memory_order_relaxed);
      default:
        return nullptr;
    }
  }


  void HttpConnectionIdentity::ResetForTests()
  {
    state.store(kUnconfigured, std::memory_order_release);
    failures.store(0, std::memory_order_relaxed);
    refusal.store(nullptr, std::memory_order_relaxed);
    httpPort = 0;
    verifier = nullptr;
  }
}
