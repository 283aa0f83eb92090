#include "Platform/HttpConnectionIdentity.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

using namespace IngestPerf;

namespace
{
  // The start of civetweb's struct mg_request_info from remote_addr on (include/civetweb.h, 1.14-1.16).
  struct RequestInfoTail
  {
    char remoteAddress[48];
    long long contentLength;
    int remotePort;
    int serverPort;
    int isSsl;
    void* userData;
    void* connectionData;
  };
  static_assert(offsetof(RequestInfoTail, remotePort) == 56, "civetweb's layout");
  static_assert(offsetof(RequestInfoTail, serverPort) == 60, "civetweb's layout");

  RequestInfoTail Request(const char* address, int clientPort, int serverPort = 8042)
  {
    RequestInfoTail info{};
    strncpy(info.remoteAddress, address, sizeof(info.remoteAddress) - 1);
    info.remotePort = clientPort;
    info.serverPort = serverPort;
    return info;
  }

  // The plugin's thread, with Orthanc's HTTP connections as `open` lists them.
  int Verify(std::initializer_list<uint64_t> open)
  {
    int checks = 0;
    HttpConnectionIdentity::VerifyCandidate([&](uint64_t connection) {
      checks++;
      for (uint64_t key : open)
      {
        if (key == connection)
        {
          return true;
        }
      }
      return false;
    });
    return checks;
  }

  class HttpConnectionIdentityTest : public ::testing::Test
  {
  protected:
    void SetUp() override { HttpConnectionIdentity::ResetForTests(); }
    void TearDown() override { HttpConnectionIdentity::ResetForTests(); }
  };
}


TEST_F(HttpConnectionIdentityTest, AClientsAddressAndPortNameItsConnectionOnceThePluginsThreadFoundIt)
{
  HttpConnectionIdentity::Configure(8042, true);
  const RequestInfoTail first = Request("::ffff:127.0.0.1", 50000);
  const RequestInfoTail again = Request("::ffff:127.0.0.1", 50000);
  const RequestInfoTail next = Request("::ffff:127.0.0.1", 50002);
  const RequestInfoTail elsewhere = Request("10.0.0.7", 50000);
  // The first request leaves a candidate, and has its connection from the fields copied safely;
  // nothing is looked for among the sockets on its thread.
  const uint64_t expected = HttpConnectionIdentity::KeyOf("127.0.0.1", 50000);
  EXPECT_FALSE(HttpConnectionIdentity::CandidateWaiting());
  EXPECT_EQ(expected, HttpConnectionIdentity::Identify(first.remoteAddress));
  EXPECT_TRUE(HttpConnectionIdentity::CandidateWaiting());
  EXPECT_EQ(expected, HttpConnectionIdentity::Identify(again.remoteAddress));  // copied again meanwhile
  // The plugin's thread finds it among Orthanc's sockets, which name the client as IPv4.
  EXPECT_EQ(1, Verify({HttpConnectionIdentity::KeyOf("127.0.0.1", 50000)}));
  EXPECT_FALSE(HttpConnectionIdentity::CandidateWaiting());
  EXPECT_EQ(0, Verify({}));  // decided: nothing left to check
  const uint64_t key = HttpConnectionIdentity::Identify(again.remoteAddress);
  EXPECT_EQ(HttpConnectionIdentity::KeyOf("127.0.0.1", 50000), key);
  EXPECT_NE(key, HttpConnectionIdentity::Identify(next.remoteAddress));
  EXPECT_NE(key, HttpConnectionIdentity::Identify(elsewhere.remoteAddress));
  EXPECT_EQ(HttpConnectionIdentity::AddressKey("127.0.0.1"), HttpConnectionIdentity::AddressOf(key));
  EXPECT_EQ(HttpConnectionIdentity::AddressKey("::ffff:127.0.0.1"), HttpConnectionIdentity::AddressOf(key));
  EXPECT_NE(HttpConnectionIdentity::AddressKey("10.0.0.7"), HttpConnectionIdentity::AddressOf(key));
  EXPECT_EQ(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(nullptr));
}


TEST_F(HttpConnectionIdentityTest, AnAddressThatIsNotCivetwebsIsRefusedAfterThreeCopiesAndSaysWhy)
{
  HttpConnectionIdentity::Configure(8042, true);
  // Another server port where civetweb keeps it: not Orthanc's request information.
  const RequestInfoTail wrong = Request("127.0.0.1", 50000, 9999);
  for (int i = 0; i < 5; i++)
  {
    EXPECT_EQ(0u, HttpConnectionIdentity::Identify(wrong.remoteAddress));
    EXPECT_FALSE(HttpConnectionIdentity::CandidateWaiting());  // never left for the sockets
  }
  ASSERT_NE(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_NE(std::string::npos, std::string(HttpConnectionIdentity::UnknownReason()).find("civetweb"));
  // Refused for good, even for a right one.
  const RequestInfoTail right = Request("127.0.0.1", 50000);
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(right.remoteAddress));
  EXPECT_FALSE(HttpConnectionIdentity::CandidateWaiting());
}


TEST_F(HttpConnectionIdentityTest, ACandidateNotAmongOrthancsConnectionsIsTriedAgainThenRefused)
{
  HttpConnectionIdentity::Configure(8042, true);
  const RequestInfoTail info = Request("127.0.0.1", 50000);
  int checks = 0;
  for (int i = 0; i < 16; i++)
  {
    ASSERT_EQ(nullptr, HttpConnectionIdentity::UnknownReason()) << i;  // a closed connection is a miss
    EXPECT_EQ(HttpConnectionIdentity::KeyOf("127.0.0.1", 50000), HttpConnectionIdentity::Identify(info.remoteAddress));
    checks += Verify({HttpConnectionIdentity::KeyOf("127.0.0.1", 50001)});
  }
  EXPECT_EQ(16, checks);
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(info.remoteAddress));  // refused for good
  ASSERT_NE(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_NE(std::string::npos, std::string(HttpConnectionIdentity::UnknownReason()).find("not one of Orthanc"));
}


TEST_F(HttpConnectionIdentityTest, WithoutKeepAliveOrWhenTurnedOffNoRequestHasAConnectionAndTheReasonSaysSo)
{
  const RequestInfoTail info = Request("127.0.0.1", 50000);
  HttpConnectionIdentity::Configure(8042, false);
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(info.remoteAddress));
  EXPECT_FALSE(HttpConnectionIdentity::CandidateWaiting());
  ASSERT_NE(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_NE(std::string::npos, std::string(HttpConnectionIdentity::UnknownReason()).find("KeepAlive"));

  HttpConnectionIdentity::Configure(8042, true, false);
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(info.remoteAddress));
  EXPECT_FALSE(HttpConnectionIdentity::CandidateWaiting());
  ASSERT_NE(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_NE(std::string::npos,
            std::string(HttpConnectionIdentity::UnknownReason()).find("IngestPerf.HttpConnectionIdentity"));
}
