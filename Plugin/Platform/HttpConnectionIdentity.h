// Which TCP connection an HTTP request came on, for the time between two requests of one keep-alive
// connection (requestGap). Orthanc passes its HTTP filter the client's address as the `ip` pointer,
// which is civetweb's own request_info.remote_addr (Orthanc 1.10.1 to 1.12.x, civetweb 1.14 to
// 1.16: HttpServer.cpp passes request->remote_addr uncopied), a field of the public struct
// mg_request_info whose next fields are the client's port and the server's port, rewritten by
// civetweb for every new connection. A civetweb worker serves one connection at a time, request
// after request, until it closes; the client's (address, port) tells one connection from the next
// on a thread (a new connection from the same client has another source port).
//
// Reading past the string relies on that layout, so nothing is trusted before it is checked: the
// first readings copy the fields with process_vm_readv (an unmapped address gives an error, never a
// fault), check that the server's port is Orthanc's HttpPort and the ports are in range, then look
// for that very connection among Orthanc's own sockets (the caller's Verifier, once). Until then, and
// for good after a failed check, no request has a connection, and requestGap says why. After it,
// one plain read of two integers per ingest request: no system call, no allocation.
#pragma once

#include <cstdint>

namespace IngestPerf
{
  class HttpConnectionIdentity
  {
  public:
    // Whether Orthanc has a connection from `ip` to `clientPort` on its HTTP port now.
    using Verifier = bool (*)(const char* ip, uint16_t clientPort, uint16_t httpPort);

    // Set once at start-up, before any request: Orthanc's HttpPort, and whether keep-alive is on.
    static void Configure(uint16_t httpPort, bool keepAlive, Verifier verifier);

    // The connection of the request being filtered on this thread, from the filter's `ip`: a key,
    // equal for the requests of one connection and different for another one on the same thread;
    // 0 when not known (not verified yet, refused, or `ip` null).
    static uint64_t Identify(const char* ip);

    // Why requests have no connection, or nullptr when they have one (or it is not checked yet, or
    // never configured: no HTTP filter).
    static const char* UnknownReason();

    // Tests: back to the state before Configure.
    static void ResetForTests();
  };
}
