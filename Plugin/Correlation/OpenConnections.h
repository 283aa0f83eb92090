// Open C-STORE associations, counted where they really are: the kernel's table of established TCP
// connections to Orthanc's DicomPort (/proc/self/net/tcp and tcp6), one per association. Read by
// the statistics reader only, never on the ingest path. Linux only; elsewhere reported unavailable.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace IngestPerf
{
  struct OpenConnections
  {
    bool available = false;
    int64_t readNs = 0;  // monotonic time when the reading started
    uint64_t count = 0;
    std::map<std::string, uint64_t> byRemoteIp;
  };

  // Parses the text of /proc/net/tcp or /proc/net/tcp6 (any number of lines), adding the
  // established connections whose local port is `port`.
  void ParseProcNetTcp(OpenConnections& target, const std::string& text, uint16_t port);

  // The count of ParseProcNetTcp alone, without the addresses: no allocation, for the sampler's
  // thread, which reads the table every second while Orthanc ingests (the fuzzer checks that both
  // count the same lines).
  uint64_t CountEstablished(const std::string& text, uint16_t port);

  OpenConnections ReadOpenConnections(uint16_t port);

  // The counts only (no byRemoteIp) for two ports, each file of the table read once.
  void CountOpenConnections(uint16_t first, uint16_t second, OpenConnections& toFirst, OpenConnections& toSecond);
}
