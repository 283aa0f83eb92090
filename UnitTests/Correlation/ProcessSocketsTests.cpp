#include "Correlation/ProcessSockets.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <vector>

using namespace IngestPerf;

namespace
{
  uint16_t LocalPort(int fd)
  {
    sockaddr_in address{};
    socklen_t length = sizeof(address);
    EXPECT_EQ(0, getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length));
    return ntohs(address.sin_port);
  }

  // A listening socket on a free loopback port, a client connected to it and the accepted end.
  struct Connection
  {
    int listener = -1;
    int client = -1;
    int accepted = -1;
    uint16_t port = 0;

    Connection()
    {
      listener = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in address{};
      address.sin_family = AF_INET;
      address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      EXPECT_EQ(0, bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)));
      EXPECT_EQ(0, listen(listener, 4));
      port = LocalPort(listener);
      address.sin_port = htons(port);
      client = socket(AF_INET, SOCK_STREAM, 0);
      EXPECT_EQ(0, connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)));
      accepted = accept(listener, nullptr, nullptr);
      EXPECT_GE(accepted, 0);
    }

    ~Connection()
    {
      for (int fd : {listener, client, accepted})
      {
        if (fd >= 0)
        {
          close(fd);
        }
      }
    }
  };
}


TEST(ProcessSockets, FindsTheListenerAndTheConnectionsOfAPort)
{
  Connection connection;
  std::vector<SocketInfo> found;
  ASSERT_TRUE(ForEachProcessSocket(connection.port, 0, [&found](const SocketInfo& s) { found.push_back(s); }));
  ASSERT_EQ(2u, found.size());  // the client's socket has another local port
  const SocketInfo& listener = found[0].listening ? found[0] : found[1];
  const SocketInfo& accepted = found[0].listening ? found[1] : found[0];
  EXPECT_TRUE(listener.listening);
  EXPECT_EQ(connection.listener, listener.fd);
  EXPECT_STREQ("", listener.peer);
  EXPECT_FALSE(accepted.listening);
  EXPECT_EQ(connection.accepted, accepted.fd);
  EXPECT_EQ(kTcpEstablished, accepted.state);
  EXPECT_EQ(connection.port, accepted.localPort);
  EXPECT_STREQ("127.0.0.1", accepted.peer);
  EXPECT_EQ(LocalPort(connection.client), accepted.peerPort);
  EXPECT_NE(0u, accepted.cookie);
  EXPECT_NE(listener.cookie, accepted.cookie);
  EXPECT_EQ(accepted.cookie, SocketCookie(connection.accepted));
}


TEST(ProcessSockets, TheOtherPortsAndNonSocketsAreLeftOut)
{
  Connection first;
  Connection second;
  size_t count = 0;
  ForEachProcessSocket(first.port, 0, [&](const SocketInfo& s) {
    EXPECT_EQ(first.port, s.localPort);
    count++;
  });
  EXPECT_EQ(2u, count);
  count = 0;
  ForEachProcessSocket(first.port, second.port, [&](const SocketInfo&) { count++; });
  EXPECT_EQ(4u, count);
  SocketInfo info;
  EXPECT_FALSE(DescribeSocket(STDIN_FILENO, 0, 0, info) && info.localPort != 0);
}


TEST(ProcessSockets, ANewConnectionOnTheSameDescriptorHasAnotherCookie)
{
  uint64_t before;
  int number;
  {
    Connection connection;
    before = SocketCookie(connection.accepted);
    number = connection.accepted;
  }
  EXPECT_EQ(0u, SocketCookie(number));  // closed
  Connection again;
  // The lowest free numbers are taken again; whatever the number, the cookie is new.
  EXPECT_NE(0u, SocketCookie(again.accepted));
  EXPECT_NE(before, SocketCookie(again.accepted));
}


TEST(ProcessSockets, TellsWhenDataLastWentEachWay)
{
  Connection connection;
  ASSERT_EQ(1, write(connection.client, "x", 1));
  char byte;
  ASSERT_EQ(1, read(connection.accepted, &byte, 1));
  usleep(300 * 1000);
  ASSERT_EQ(1, write(connection.accepted, "y", 1));
  SocketInfo info;
  ASSERT_TRUE(DescribeSocket(connection.accepted, connection.port, 0, info));
  // The order and the sleep only: how long the reading itself waited for a CPU does not matter.
  EXPECT_LT(info.msSinceDataSent, info.msSinceDataReceived);
  EXPECT_GE(info.msSinceDataReceived, 280u);
}
