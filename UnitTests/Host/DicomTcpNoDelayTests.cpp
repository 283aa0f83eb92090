#include "Host/DicomTcpNoDelay.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace IngestPerf;

namespace
{
  bool Contains(const std::string& text, const std::string& part)
  {
    return text.find(part) != std::string::npos;
  }

  // The test process's own TCP_NODELAY, put back as it was whatever the test does (the test, not
  // the plugin, writes it: the plugin only reads it).
  class SavedVariable
  {
  public:
    SavedVariable()
    {
      const char* value = getenv("TCP_NODELAY");
      present_ = value != nullptr;
      value_ = present_ ? value : "";
    }

    ~SavedVariable()
    {
      if (present_)
      {
        setenv("TCP_NODELAY", value_.c_str(), 1);
      }
      else
      {
        unsetenv("TCP_NODELAY");
      }
    }

  private:
    bool present_ = false;
    std::string value_;
  };
}


TEST(DicomTcpNoDelay, ReadsTheVariableAsDcmtkDoes)
{
  EXPECT_FALSE(DcmtkDisablesNagle(nullptr));
  EXPECT_TRUE(DcmtkDisablesNagle("1"));
  EXPECT_TRUE(DcmtkDisablesNagle("2"));
  EXPECT_TRUE(DcmtkDisablesNagle("-1"));
  EXPECT_TRUE(DcmtkDisablesNagle(" 1"));    // %d skips leading spaces
  EXPECT_TRUE(DcmtkDisablesNagle("1abc"));  // and stops at the first non-digit
  EXPECT_FALSE(DcmtkDisablesNagle("0"));
  EXPECT_FALSE(DcmtkDisablesNagle("00"));
  EXPECT_FALSE(DcmtkDisablesNagle("0x1"));  // decimal only: reads 0
  EXPECT_FALSE(DcmtkDisablesNagle(""));     // nothing parsed: DCMTK keeps its default
  EXPECT_FALSE(DcmtkDisablesNagle("yes"));
  EXPECT_FALSE(DcmtkDisablesNagle("true"));
}


TEST(DicomTcpNoDelay, OffWithoutTheVariableAndSaysWhatItCostsAndWhatToDo)
{
  const DicomTcpNoDelayStatus status = DescribeDicomTcpNoDelay(nullptr);
  EXPECT_FALSE(status.inEffect);
  EXPECT_EQ("", status.source);
  EXPECT_TRUE(Contains(status.detail, "TCP_NODELAY is not in Orthanc's environment")) << status.detail;
  EXPECT_TRUE(Contains(status.detail, "40 ms")) << status.detail;
  EXPECT_TRUE(Contains(status.detail, "start Orthanc with TCP_NODELAY=1 in its environment")) << status.detail;
  EXPECT_TRUE(Contains(status.detail, "Environment=TCP_NODELAY=1")) << status.detail;
  EXPECT_TRUE(Contains(status.detail, "-e TCP_NODELAY=1")) << status.detail;
}


TEST(DicomTcpNoDelay, TheOperatorsEnvironmentIsReported)
{
  const DicomTcpNoDelayStatus on = DescribeDicomTcpNoDelay("1");
  EXPECT_TRUE(on.inEffect);
  EXPECT_EQ("environment", on.source);
  EXPECT_TRUE(Contains(on.detail, "TCP_NODELAY=\"1\"")) << on.detail;

  // "0" (or anything DCMTK does not read as a non-zero integer) keeps Nagle.
  const DicomTcpNoDelayStatus off = DescribeDicomTcpNoDelay("0");
  EXPECT_FALSE(off.inEffect);
  EXPECT_EQ("", off.source);
  EXPECT_TRUE(Contains(off.detail, "TCP_NODELAY=\"0\"")) << off.detail;
  EXPECT_TRUE(Contains(off.detail, "non-zero integer only")) << off.detail;
  EXPECT_TRUE(Contains(off.detail, "start Orthanc with TCP_NODELAY=1")) << off.detail;

  const std::string longValue(100, '7');
  const DicomTcpNoDelayStatus shortened = DescribeDicomTcpNoDelay(longValue.c_str());
  EXPECT_TRUE(shortened.inEffect);
  EXPECT_TRUE(Contains(shortened.detail, "TCP_NODELAY=\"" + std::string(64, '7') + "...\"")) << shortened.detail;
}


TEST(DicomTcpNoDelay, ReadsTheEnvironmentAndLeavesItAsItIs)
{
  SavedVariable saved;

  unsetenv("TCP_NODELAY");
  EXPECT_FALSE(ReadDicomTcpNoDelay().inEffect);
  EXPECT_EQ(nullptr, getenv("TCP_NODELAY"));  // not set for DCMTK behind the operator's back

  setenv("TCP_NODELAY", "1", 1);
  const DicomTcpNoDelayStatus on = ReadDicomTcpNoDelay();
  EXPECT_TRUE(on.inEffect);
  EXPECT_EQ("environment", on.source);
  EXPECT_STREQ("1", getenv("TCP_NODELAY"));

  setenv("TCP_NODELAY", "0", 1);
  EXPECT_FALSE(ReadDicomTcpNoDelay().inEffect);
  EXPECT_STREQ("0", getenv("TCP_NODELAY"));  // the operator's, never overwritten
}
