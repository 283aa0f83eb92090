#include "Host/DicomTcpNoDelay.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

using namespace IngestPerf;

namespace
{
  Configuration WithOption(bool dicomTcpNoDelay, bool enable = true)
  {
    Configuration configuration;
    configuration.enable = enable;
    configuration.dicomTcpNoDelay = dicomTcpNoDelay;
    return configuration;
  }

  bool Contains(const std::string& text, const std::string& part)
  {
    return text.find(part) != std::string::npos;
  }

  // The test process's own TCP_NODELAY, put back as it was whatever the test does.
  class SavedVariable
  {
  public:
    SavedVariable()
    {
      const char* value = getenv("TCP_NODELAY");
      present_ = value != nullptr;
      value_ = present_ ? value : "";
      unsetenv("TCP_NODELAY");
    }

    ~SavedVariable()
    {
      RestoreDicomTcpNoDelay();
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


TEST(DicomTcpNoDelay, OffByDefaultAndSaysWhatItCosts)
{
  const DicomTcpNoDelayStatus status = DecideDicomTcpNoDelay(Configuration(), nullptr);
  EXPECT_FALSE(status.configured);
  EXPECT_FALSE(status.inEffect);
  EXPECT_EQ("", status.source);
  EXPECT_TRUE(Contains(status.detail, "IngestPerf.DicomTcpNoDelay is false")) << status.detail;
  EXPECT_TRUE(Contains(status.detail, "40 ms")) << status.detail;
}


TEST(DicomTcpNoDelay, TheOptionSetsTheVariableWhenTheEnvironmentHasNone)
{
  const DicomTcpNoDelayStatus status = DecideDicomTcpNoDelay(WithOption(true), nullptr);
  EXPECT_TRUE(status.configured);
  EXPECT_TRUE(status.inEffect);
  EXPECT_EQ("IngestPerf.DicomTcpNoDelay", status.source);
  EXPECT_TRUE(Contains(status.detail, "TCP_NODELAY=1")) << status.detail;
}


TEST(DicomTcpNoDelay, TheOperatorsEnvironmentIsRespectedAndReported)
{
  for (bool option : {false, true})
  {
    const DicomTcpNoDelayStatus on = DecideDicomTcpNoDelay(WithOption(option), "1");
    EXPECT_EQ(option, on.configured);
    EXPECT_TRUE(on.inEffect);
    EXPECT_EQ("environment", on.source);
    EXPECT_TRUE(Contains(on.detail, "TCP_NODELAY=\"1\"")) << on.detail;
    EXPECT_EQ(option, Contains(on.detail, "had nothing to change")) << on.detail;

    // "0" (or anything DCMTK does not read as a non-zero integer) keeps Nagle, option or not.
    const DicomTcpNoDelayStatus off = DecideDicomTcpNoDelay(WithOption(option), "0");
    EXPECT_EQ(option, off.configured);
    EXPECT_FALSE(off.inEffect);
    EXPECT_EQ("", off.source);
    EXPECT_TRUE(Contains(off.detail, "TCP_NODELAY=\"0\"")) << off.detail;
    EXPECT_EQ(option, Contains(off.detail, "leaves the operator's setting as it is")) << off.detail;
  }
  const std::string longValue(100, '7');
  const DicomTcpNoDelayStatus shortened = DecideDicomTcpNoDelay(WithOption(false), longValue.c_str());
  EXPECT_TRUE(shortened.inEffect);
  EXPECT_TRUE(Contains(shortened.detail, "TCP_NODELAY=\"" + std::string(64, '7') + "...\"")) << shortened.detail;
}


TEST(DicomTcpNoDelay, ADisabledPluginChangesNothing)
{
  const DicomTcpNoDelayStatus status = DecideDicomTcpNoDelay(WithOption(true, false), nullptr);
  EXPECT_TRUE(status.configured);
  EXPECT_FALSE(status.inEffect);
  EXPECT_EQ("", status.source);
  EXPECT_TRUE(Contains(status.detail, "IngestPerf.Enable is false")) << status.detail;
  // The operator's variable applies all the same: DCMTK reads it, not the plugin.
  EXPECT_TRUE(DecideDicomTcpNoDelay(WithOption(true, false), "1").inEffect);
}


TEST(DicomTcpNoDelay, ApplySetsTheVariableAndRestoreRemovesOnlyItsOwn)
{
  SavedVariable saved;

  const DicomTcpNoDelayStatus off = ApplyDicomTcpNoDelay(WithOption(false));
  EXPECT_FALSE(off.inEffect);
  EXPECT_EQ(nullptr, getenv("TCP_NODELAY"));

  const DicomTcpNoDelayStatus on = ApplyDicomTcpNoDelay(WithOption(true));
  EXPECT_TRUE(on.inEffect);
  EXPECT_EQ("IngestPerf.DicomTcpNoDelay", on.source);
  ASSERT_NE(nullptr, getenv("TCP_NODELAY"));
  EXPECT_STREQ("1", getenv("TCP_NODELAY"));
  RestoreDicomTcpNoDelay();
  EXPECT_EQ(nullptr, getenv("TCP_NODELAY"));  // a reload of the plugins sees the operator's environment

  setenv("TCP_NODELAY", "0", 1);
  const DicomTcpNoDelayStatus respected = ApplyDicomTcpNoDelay(WithOption(true));
  EXPECT_FALSE(respected.inEffect);
  EXPECT_STREQ("0", getenv("TCP_NODELAY"));
  RestoreDicomTcpNoDelay();
  EXPECT_STREQ("0", getenv("TCP_NODELAY"));  // the operator's, never removed
}
