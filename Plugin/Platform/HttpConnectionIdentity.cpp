#include "Platform/HttpConnectionIdentity.h"

#include "Platform/Hash.h"

#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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
      kUnverified,  // the next ingest request leaves a candidate
      kCopying,     // one request copies it now
      kCandidate,   // for the plugin's thread
      kVerified,
      kRefused
    };

    // Copies that do not look like civetweb's request information this many times leave the identity
    // refused for good; so do this many candidates not found among Orthanc's sockets (a connection may
    // close before the plugin's thread reads them: one upload per connection).
    constexpr int kAttempts = 3;
    constexpr int kMisses = 16;

    std::atomic<int> state{kUnconfigured};
    std::atomic<int> failures{0};
    std::atomic<int> misses{0};
    std::atomic<const char*> refusal{nullptr};
    uint16_t httpPort = 0;
    // The candidate: written by the request that moved the state to kCopying, read by the plugin's
    // thread once the state is kCandidate (release/acquire on `state`).
    char candidateAddress[kAddressLength] = {0};
    uint16_t candidatePort = 0;

    const char* const kNoKeepAlive =
      "Orthanc's KeepAlive is false: every HTTP request comes on a connection of its own, so there is no time "
      "between two requests of one connection";

    const char* const kNotWanted = "IngestPerf.HttpConnectionIdentity is false: the plugin does not read civetweb's "
                                   "request information, so it does not know which connection a request came on";
    const char* const kCopyRefused =
      "the system refused the plugin a copy of civetweb's request information (process_vm_readv: not permitted, a "
      "seccomp filter or a security module): the connection of a request is not known";

    // Copies the ports and the address without faulting, whatever `ip` points to (an unmapped
    // address is an error): -1 when the system refuses the call itself, 0 on another failure.
    int CopySafely(const char* ip, Ports& ports, char* address)
    {
      iovec local[2] = {{address, kAddressLength}, {&ports, sizeof(ports)}};
      iovec remote[2] = {{const_cast<char*>(ip), kAddressLength},
                         {const_cast<char*>(ip) + kRemotePortOffset, sizeof(ports)}};
      const ssize_t copied = process_vm_readv(getpid(), local, 2, remote, 2, 0);
      if (copied < 0 && (errno == EPERM || errno == ENOSYS || errno == EACCES))
      {
        return -1;
      }
      return copied == static_cast<ssize_t>(kAddressLength + sizeof(ports)) ? 1 : 0;
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

    // A check that failed: kAttempts copies, or kMisses candidates, leave the identity refused for good.
    void Failed(bool plausible)
    {
      if ((plausible ? misses : failures).fetch_add(1, std::memory_order_relaxed) + 1 >=
          (plausible ? kMisses : kAttempts))
      {
        Refuse(!plausible ? "the HTTP server does not hand the plugin civetweb's request information as Orthanc "
                            "1.10.1 to 1.13.0 do (its client's port is not where civetweb 1.14 to 1.16 keep it): "
                            "the connection of a request is not known"
                          : "the client port that civetweb's request information gives is not one of Orthanc's HTTP "
                            "connections: the connection of a request is not known");
        return;
      }
      state.store(kUnverified, std::memory_order_release);
    }

    // The fields copied safely and checked; false (and the failure counted) when they do not look
    // like civetweb's request information, or the system refused the copy.
    bool CopyChecked(const char* ip, char* address, uint16_t& clientPort)
    {
      Ports ports{};
      const int copied = CopySafely(ip, ports, address);
      if (copied < 0)
      {
        Refuse(kCopyRefused);
        return false;
      }
      if (copied == 0 || memchr(address, '\0', kAddressLength) == nullptr || !Plausible(address, ports))
      {
        return false;
      }
      clientPort = static_cast<uint16_t>(ports.remotePort);
      return true;
    }

    // One request, on its thread: the fields copied safely and checked, left for the plugin's thread
    // to find among Orthanc's sockets. Returns the connection they name, 0 when they do not look
    // right.
    uint64_t LeaveCandidate(const char* ip)
    {
      int expected = kUnverified;
      if (!state.compare_exchange_strong(expected, kCopying, std::memory_order_acq_rel))
      {
        return 0;  // another request copies now, or it is decided
      }
      char address[kAddressLength];
      uint16_t clientPort = 0;
      if (!CopyChecked(ip, address, clientPort))
      {
        if (state.load(std::memory_order_relaxed) != kRefused)
        {
          Failed(false);
        }
        return 0;
      }
      memcpy(candidateAddress, address, kAddressLength);
      candidatePort = clientPort;
      state.store(kCandidate, std::memory_order_release);
      return HttpConnectionIdentity::KeyOf(address, clientPort);
    }
  }


  void HttpConnectionIdentity::Configure(uint16_t port, bool keepAlive, bool wanted)
  {
    httpPort = port;
    failures.store(0, std::memory_order_relaxed);
    misses.store(0, std::memory_order_relaxed);
    refusal.store(nullptr, std::memory_order_relaxed);
    if (!wanted)
    {
      Refuse(kNotWanted);
    }
    else if (!keepAlive)
    {
      Refuse(kNoKeepAlive);
    }
    else
    {
      state.store(kUnverified, std::memory_order_release);
    }
  }


  bool HttpConnectionIdentity::CandidateWaiting()
  {
    return state.load(std::memory_order_relaxed) == kCandidate;
  }


  void HttpConnectionIdentity::VerifyCandidate(const std::function<bool(uint64_t connection)>& hasConnection)
  {
    if (state.load(std::memory_order_acquire) != kCandidate)
    {
      return;
    }
    if (hasConnection(KeyOf(candidateAddress, candidatePort)))
    {
      state.store(kVerified, std::memory_order_release);
    }
    else
    {
      Failed(true);
    }
  }


  namespace
  {
    // civetweb names an IPv4 client of an IPv6 socket as ::ffff:a.b.c.d; the sockets' reading as a.b.c.d.
    const char* Unmapped(const char* address)
    {
      return strncmp(address, "::ffff:", 7) == 0 && strchr(address + 7, ':') == nullptr ? address + 7 : address;
    }
  }


  // A key is the top bit (never 0), 47 bits of the address's hash, and the client's port (or 0).
  uint64_t HttpConnectionIdentity::AddressKey(const char* address)
  {
    return address == nullptr ? 0 : ((HashKey(Unmapped(address)) & kAddressBits) | kKeyBit);
  }


  uint64_t HttpConnectionIdentity::KeyOf(const char* address, uint16_t clientPort)
  {
    return address == nullptr ? 0 : (((HashKey(Unmapped(address)) & kAddressBits) << 16) | clientPort | kKeyBit);
  }


  uint64_t HttpConnectionIdentity::Identify(const char* ip)
  {
    if (ip == nullptr)
    {
      return 0;
    }
    const int current = state.load(std::memory_order_acquire);
    if (current == kUnverified)
    {
      return LeaveCandidate(ip);
    }
    if (current == kCopying || current == kCandidate)
    {
      // Until the plugin's thread has looked: the fields copied safely and checked again, each time.
      char address[kAddressLength];
      uint16_t clientPort = 0;
      return CopyChecked(ip, address, clientPort) ? KeyOf(address, clientPort) : 0;
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
    return KeyOf(ip, static_cast<uint16_t>(ports.remotePort));
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
    misses.store(0, std::memory_order_relaxed);
    refusal.store(nullptr, std::memory_order_relaxed);
    httpPort = 0;
    candidateAddress[0] = '\0';
    candidatePort = 0;
  }
}
