// Which TCP connection an HTTP request came on, for the time between two requests of one keep-alive
// connection (requestGap). Orthanc passes its HTTP filter the client's address as the `ip` pointer,
// which is civetweb's own request_info.remote_addr (Orthanc 1.10.1 to 1.13.0, civetweb 1.14 to
// 1.16: HttpServer.cpp passes request->remote_addr uncopied), a field of the public struct
// mg_request_info whose next fields are the client's port and the server's port, rewritten by
// civetweb for every new connection. A civetweb worker serves one connection at a time, request
// after request, until it closes; the client's (address, port) tells one connection from the next
// on a thread (a new connection from the same client has another source port).
//
// Reading past the string relies on that layout, the one read of another library's memory the plugin
// makes, so nothing is read plainly before it is checked: the first ingest request copies the fields
// with process_vm_readv (an unmapped address gives an error, never a fault), checks that the server's
// port is Orthanc's HttpPort and the ports are in range, and leaves the connection they name as a
// candidate; the plugin's own thread looks for it among Orthanc's sockets (VerifyCandidate), never
// the request's thread. Until it has looked, each ingest request copies and checks the fields the
// same way (a system call per request, for the first milliseconds); once it found the connection,
// one plain read of two integers per ingest request: no system call, no allocation. After a failed
// check (or when IngestPerf.HttpConnectionIdentity is false, or the system refuses the copy), no
// request has a connection, for good, and requestGap says why.
#pragma once

#include <cstdint>
#include <functional>

namespace IngestPerf
{
  class HttpConnectionIdentity
  {
  public:
    // Set once at start-up, before any request: Orthanc's HttpPort, whether keep-alive is on, and
    // whether the identity is wanted at all (IngestPerf.HttpConnectionIdentity).
    static void Configure(uint16_t httpPort, bool keepAlive, bool wanted = true);

    // The connection of the request being filtered on this thread, from the filter's `ip`: a key,
    // equal for the requests of one connection and different for another one on the same thread;
    // 0 when not known (not verified yet, refused, or `ip` null).
    static uint64_t Identify(const char* ip);

    // Whether a request left a candidate that the plugin's thread has not checked yet (one load).
    static bool CandidateWaiting();
    // The plugin's thread: if a request left a candidate, whether Orthanc has that connection
    // (`hasConnection(KeyOf(...))`, from its reading of Orthanc's sockets) decides it.
    static void VerifyCandidate(const std::function<bool(uint64_t connection)>& hasConnection);

    // The key Identify gives the connection of a client at `address` (civetweb's text, or a socket's
    // peer: an IPv4-mapped address counts as the IPv4 one) and `clientPort`: never 0 for an address.
    static uint64_t KeyOf(const char* address, uint16_t clientPort);
    // The address alone, for when the port is not known: never 0 for an address.
    static uint64_t AddressKey(const char* address);
    // The address part of a connection's key (equal to AddressKey of its address).
    static uint64_t AddressOf(uint64_t connection)
    {
      return connection == 0 ? 0 : (((connection & ~kKeyBit) >> 16) | kKeyBit);
    }


    // Why requests have no connection, or nullptr when they have one (or it is not checked yet, or
    // never configured: no HTTP filter).
    static const char* UnknownReason();

    // Tests: back to the state before Configure.
    static void ResetForTests();

  private:
    static constexpr uint64_t kKeyBit = uint64_t(1) << 63;
    static constexpr uint64_t kAddressBits = (uint64_t(1) << 47) - 1;
  };
}
