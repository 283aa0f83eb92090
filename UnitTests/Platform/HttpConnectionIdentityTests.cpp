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

  int checks = 0;
  bool Accept(const char*, uint16_t, uint16_t)
  {
    checks++;
    return true;
  }
  bool Refuse(const char*, uint16_t, uint16_t)
  {
    checks++;
    return false;
  }

  class HttpConnectionIdentityTest : public ::testing::Test
  {
  protected:
    void SetUp() override
    {
      HttpConnectionIdentity::ResetForTests();
      checks = 0;
    }
    void TearDown() override { HttpConnectionIdentity::ResetForTests(); }
  };
}


TEST_F(HttpConnectionIdentityTest, AClientsAddressAndPortNameItsConnectionOnceChecked)
{
  HttpConnectionIdentity::Configure(8042, true, Accept);
  const RequestInfoTail first = Request("127.0.0.1", 50000);
  const RequestInfoTail again = Request("127.0.0.1", 50000);
  const RequestInfoTail next = Request("127.0.0.1", 50002);
  const RequestInfoTail elsewhere = Request("10.0.0.7", 50000);
  const uint64_t key = HttpConnectionIdentity::Identify(first.remoteAddress);
  EXPECT_NE(0u, key);
  EXPECT_EQ(1, checks);  // checked once, against Orthanc's sockets
  EXPECT_EQ(key, HttpConnectionIdentity::Identify(again.remoteAddress));
  EXPECT_NE(key, HttpConnectionIdentity::Identify(next.remoteAddress));
  EXPECT_NE(key, HttpConnectionIdentity::Identify(elsewhere.remoteAddress));
  EXPECT_EQ(1, checks);
  EXPECT_EQ(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(nullptr));
}


TEST_F(HttpConnectionIdentityTest, AnAddressThatIsNotCivetwebsIsRefusedAfterThreeChecksAndSaysWhy)
{
  HttpConnectionIdentity::Configure(8042, true, Accept);
  // Another server port where civetweb keeps it: not Orthanc's request information.
  const RequestInfoTail wrong = Request("127.0.0.1", 50000, 9999);
  for (int i = 0; i < 5; i++)
  {
    EXPECT_EQ(0u, HttpConnectionIdentity::Identify(wrong.remoteAddress));
  }
  EXPECT_EQ(0, checks);  // never looked for among the sockets
  ASSERT_NE(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_NE(std::string::npos, std::string(HttpConnectionIdentity::UnknownReason()).find("civetweb"));
  // Refused for good, even for a right one.
  const RequestInfoTail right = Request("127.0.0.1", 50000);
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(right.remoteAddress));
}


TEST_F(HttpConnectionIdentityTest, APortThatIsNoConnectionOfOrthancsIsRefused)
{
  HttpConnectionIdentity::Configure(8042, true, Refuse);
  const RequestInfoTail info = Request("127.0.0.1", 50000);
  for (int i = 0; i < 3; i++)
  {
    EXPECT_EQ(0u, HttpConnectionIdentity::Identify(info.remoteAddress));
  }
  EXPECT_EQ(3, checks);
  ASSERT_NE(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_NE(std::string::npos, std::string(HttpConnectionIdentity::UnknownReason()).find("not one of Orthanc"));
}


TEST_F(HttpConnectionIdentityTest, WithoutKeepAliveNoRequestHasAConnectionOfItsOwnAndTheReasonSaysSo)
{
  HttpConnectionIdentity::Configure(8042, false, Accept);
  const RequestInfoTail info = Request("127.0.0.1", 50000);
  EXPECT_EQ(0u, HttpConnectionIdentity::Identify(info.remoteAddress));
  EXPECT_EQ(0, checks);
  ASSERT_NE(nullptr, HttpConnectionIdentity::UnknownReason());
  EXPECT_NE(std::string::npos, std::string(HttpConnectionIdentity::UnknownReason()).find("KeepAlive"));
}
