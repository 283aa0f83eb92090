#include "Correlation/OpenConnections.h"

#include <gtest/gtest.h>

#include <string>

using namespace IngestPerf;


TEST(OpenConnections, ParsesEstablishedConnectionsToThePort)
{
  const std::string tcp =
    "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
    "   0: 00000000:1092 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n"
    "   1: 0100007F:1092 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 2 1\n"
    "   2: 0100007F:1092 0100007F:D2F2 01 00000000:00000000 00:00000000 00000000     0        0 3 1\n"
    "   3: 0100007F:1092 0A00000A:D2F4 06 00000000:00000000 00:00000000 00000000     0        0 4 1\n"
    "   4: 0100007F:D2F6 0100007F:1092 01 00000000:00000000 00:00000000 00000000     0        0 5 1\n"
    "   5: 0300A8C0:1092 0A01A8C0:9C40 01 00000000:00000000 00:00000000 00000000     0        0 6 1\n";
  const std::string tcp6 = "  sl  local_address                         remote_address                        st\n"
                           "   0: 0000000000000000FFFF00000100007F:1092 0000000000000000FFFF00000A01A8C0:9C42 01 0\n";
  OpenConnections connections;
  ParseProcNetTcp(connections, tcp, 4242);  // 0x1092
  ParseProcNetTcp(connections, tcp6, 4242);
  EXPECT_EQ(4u, connections.count);  // listening (0A), time-wait (06) and outgoing (local D2F6) excluded
  EXPECT_EQ(2u, connections.byRemoteIp["127.0.0.1"]);
  EXPECT_EQ(2u, connections.byRemoteIp["192.168.1.10"]);
  OpenConnections none;
  ParseProcNetTcp(none, "garbage\nmore garbage\n", 4242);
  EXPECT_EQ(0u, none.count);
}


// Found by Fuzzing/ProcNetTcpFuzzer, from its first seed (this machine's tcp6 table): an IPv6
// client was shown as "0:0:0:0:0:0:0:1", not "::1" (RFC 5952, as inet_ntop writes it and clients
// and logs show it); and a line whose remote address was no address (here empty) was counted
// under that text. Addresses are now inet_ntop's, and such lines count nothing.
TEST(OpenConnections, AddressesAreCanonicalAndMalformedLinesCountNothing)
{
  const std::string tcp6 = "  sl  local_address                         remote_address                        st\n"
                           "   1: 00000000000000000000000001000000:DC25 00000000000000000000000001000000:C850 01 0\n"
                           "   2: 00000000000000000000000001000000:DC25 000080FE000000000000000001000000:C852 01 0\n"
                           "   3: 00000000000000000000000001000000:DC25 B80D0120000000000000000001004200:C854 01 0\n"
                           "   4: 00000000000000000000000001000000:DC25 :C856 01 0\n"
                           "   5: 00000000000000000000000001000000:DC25 0100007G:C858 01 0\n"
                           "   6: 00000000000000000000000001000000:DC25 0100007F0:C85A 01 0\n";
  OpenConnections connections;
  ParseProcNetTcp(connections, tcp6, 0xDC25);
  EXPECT_EQ(3u, connections.count);
  EXPECT_EQ(1u, connections.byRemoteIp["::1"]);
  EXPECT_EQ(1u, connections.byRemoteIp["fe80::1"]);
  EXPECT_EQ(1u, connections.byRemoteIp["2001:db8::42:1"]);
  EXPECT_EQ(3u, connections.byRemoteIp.size());
}
