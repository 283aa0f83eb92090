#include "Capture/DicomMetaHeader.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  // A Part 10 meta header in explicit VR little endian, as written by any DICOM toolkit.
  std::string PartTenFile(const std::string& syntax, bool withLongElementFirst = true)
  {
    std::string file(128, '\0');
    file += "DICM";
    auto element = [&](uint16_t tag, const char* vr, const std::string& value) {
      std::string padded = value;
      if (padded.size() % 2)
      {
        padded += '\0';
      }
      file += char(0x02);
      file += char(0x00);
      file += char(tag & 0xff);
      file += char(tag >> 8);
      file += vr;
      if (std::string(vr) == "OB")
      {
        file += std::string(2, '\0');
        const uint32_t n = static_cast<uint32_t>(padded.size());
        file += std::string{char(n & 0xff), char((n >> 8) & 0xff), char((n >> 16) & 0xff), char(n >> 24)};
      }
      else
      {
        const uint16_t n = static_cast<uint16_t>(padded.size());
        file += std::string{char(n & 0xff), char(n >> 8)};
      }
      file += padded;
    };
    if (withLongElementFirst)
    {
      element(0x0001, "OB", std::string("\0\1", 2));
    }
    element(0x0002, "UI", "1.2.840.10008.5.1.4.1.1.2");
    element(0x0003, "UI", "1.2.3.4.5");
    element(0x0010, "UI", syntax);
    file += std::string("\x08\x00\x05\x00", 4);  // the dataset begins
    return file;
  }
}


TEST(DicomMetaHeader, ReadsTheTransferSyntax)
{
  MetaHeader header;
  std::string file = PartTenFile("1.2.840.10008.1.2.4.70");  // odd length: NUL-padded
  ASSERT_TRUE(ReadMetaHeader(header, file.data(), file.size()));
  EXPECT_STREQ("1.2.840.10008.1.2.4.70", header.transferSyntax);
  file = PartTenFile("1.2.840.10008.1.2.1", false);
  ASSERT_TRUE(ReadMetaHeader(header, file.data(), file.size()));
  EXPECT_STREQ("1.2.840.10008.1.2.1", header.transferSyntax);
}


TEST(DicomMetaHeader, RefusesAnythingElseWithoutReadingPastTheBuffer)
{
  MetaHeader header;
  const std::string file = PartTenFile("1.2.840.10008.1.2.1");
  for (size_t cut = 0; cut < file.size() - 4; cut++)
  {
    // Every truncation either fails or finds the whole UID (ASan checks the reads).
    std::vector<char> copy(file.begin(), file.begin() + cut);
    if (ReadMetaHeader(header, copy.data(), copy.size()))
    {
      EXPECT_STREQ("1.2.840.10008.1.2.1", header.transferSyntax);
    }
  }
  EXPECT_FALSE(ReadMetaHeader(header, "not dicom", 9));
  EXPECT_FALSE(ReadMetaHeader(header, nullptr, 1000));
  std::string noMeta(128, '\0');
  noMeta += "DICM";
  noMeta += std::string("\x08\x00\x05\x00", 4);
  EXPECT_FALSE(ReadMetaHeader(header, noMeta.data(), noMeta.size()));
}


TEST(DicomMetaHeader, ReadsTheSopClassBesideTheSyntax)
{
  MetaHeader header;
  const std::string file = PartTenFile("1.2.840.10008.1.2.4.70");
  ASSERT_TRUE(ReadMetaHeader(header, file.data(), file.size()));
  EXPECT_STREQ("1.2.840.10008.5.1.4.1.1.2", header.sopClass);
  EXPECT_STREQ("1.2.3.4.5", header.sopInstance);
  EXPECT_STREQ("1.2.840.10008.1.2.4.70", header.transferSyntax);

  // Cut inside the transfer syntax element: the SOP class is still known, the syntax is not.
  const size_t cut = file.find("1.2.840.10008.1.2.4.70") + 5;
  EXPECT_FALSE(ReadMetaHeader(header, file.data(), cut));
  EXPECT_STREQ("1.2.840.10008.5.1.4.1.1.2", header.sopClass);
  EXPECT_STREQ("", header.transferSyntax);

  EXPECT_FALSE(ReadMetaHeader(header, "not dicom", 9));
  EXPECT_STREQ("", header.sopClass);
  EXPECT_STREQ("", header.sopInstance);
}


// Found by Fuzzing/MetaHeaderFuzzer (minimized input below): a value with bytes after a NUL kept
// them, so the label, a C string, ended at that NUL with a trailing space left in it. A UID ends
// at its first NUL, then loses its trailing spaces.
TEST(DicomMetaHeader, AUidEndsAtItsFirstNul)
{
  std::string file(128, '\0');
  file += "DICM";
  file += std::string("\x02\x00\x02\x00\x0e\x00\x08\x00` \x00"
                      "4.1..",
                      16);
  MetaHeader header;
  EXPECT_FALSE(ReadMetaHeader(header, file.data(), file.size()));
  EXPECT_STREQ("`", header.sopClass);

  file = PartTenFile(std::string("1.2.840.10008.1.2.1 \0 9", 23));
  ASSERT_TRUE(ReadMetaHeader(header, file.data(), file.size()));
  EXPECT_STREQ("1.2.840.10008.1.2.1", header.transferSyntax);
}


// No cut of a value longer than any UID passes for one (LabelExposure withholds it): it ends in "~".
TEST(DicomMetaHeader, AValueLongerThanAnyUidIsMarked)
{
  MetaHeader header;
  const std::string digits = "1." + std::string(70, '2');
  std::string file = PartTenFile(digits);
  ASSERT_TRUE(ReadMetaHeader(header, file.data(), file.size()));
  EXPECT_EQ(digits.substr(0, kMaxUidLength - 1) + "~", header.transferSyntax);
  const std::string longest = "1." + std::string(kMaxUidLength - 2, '3');  // 64 characters: a UID
  file = PartTenFile(longest);
  ASSERT_TRUE(ReadMetaHeader(header, file.data(), file.size()));
  EXPECT_EQ(longest, header.transferSyntax);
}
