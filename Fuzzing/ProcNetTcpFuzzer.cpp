// ParseProcNetTcp and CountEstablished (Correlation/OpenConnections): the kernel's TCP tables, /proc/self/net/tcp and
// tcp6, read when /perf/stats is asked for. The input's first two bytes are the DicomPort
// (little endian), the rest the table's text. Beyond not crashing: the count is the sum of the
// per-address counts and at most one per line, and every address is a real one, in the
// canonical form inet_ntop gives (RFC 5952), IPv4 clients of a dual-stack socket as plain IPv4;
// and CountEstablished, the sampler's allocation-free count, agrees with it on every input.
#include "FuzzProperty.h"

#include "Correlation/OpenConnections.h"

#include <arpa/inet.h>

#include <cstring>
#include <string>

using namespace IngestPerf;

namespace
{
  void CheckAddress(const std::string& address)
  {
    FUZZ_PROPERTY(!address.empty());
    unsigned char bytes[16];
    char canonical[INET6_ADDRSTRLEN];
    if (inet_pton(AF_INET, address.c_str(), bytes) == 1)
    {
      FUZZ_PROPERTY(inet_ntop(AF_INET, bytes, canonical, sizeof(canonical)) != nullptr);
      FUZZ_PROPERTY(address == canonical);
    }
    else if (inet_pton(AF_INET6, address.c_str(), bytes) == 1)
    {
      FUZZ_PROPERTY(inet_ntop(AF_INET6, bytes, canonical, sizeof(canonical)) != nullptr);
      FUZZ_PROPERTY(address == canonical);
      static const unsigned char kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
      FUZZ_PROPERTY(memcmp(bytes, kMappedPrefix, sizeof(kMappedPrefix)) != 0);  // shown as IPv4
    }
    else
    {
      FUZZ_PROPERTY(false);  // a line whose remote address is not one counts nothing
    }
  }
}


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size < 2)
  {
    return 0;
  }
  const uint16_t port = static_cast<uint16_t>(data[0] | (data[1] << 8));
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);

  OpenConnections connections;
  ParseProcNetTcp(connections, text, port);

  uint64_t sum = 0;
  for (const auto& entry : connections.byRemoteIp)
  {
    FUZZ_PROPERTY(entry.second > 0);
    sum += entry.second;
    CheckAddress(entry.first);
  }
  FUZZ_PROPERTY(sum == connections.count);
  size_t lines = 0;
  for (char c : text)
  {
    lines += c == '\n' ? 1 : 0;
  }
  FUZZ_PROPERTY(connections.count <= lines);  // the header line counts nothing, the last may lack '\n'

  // Adding the same table twice doubles every count (the parser keeps no state of its own).
  OpenConnections twice;
  ParseProcNetTcp(twice, text, port);
  ParseProcNetTcp(twice, text, port);
  FUZZ_PROPERTY(twice.count == 2 * connections.count);

  // The sampler's counter, which skips the addresses, counts exactly the same lines.
  FUZZ_PROPERTY(CountEstablished(text, port) == connections.count);
  return 0;
}
