#include "Labels/LabelCatalog.h"
#include "Labels/LabelExposure.h"
#include "Vocabulary/DicomUids.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace IngestPerf;

namespace
{
  // What a hostile or broken sender puts where a label is read: patients' names, IDs, birth dates,
  // accession numbers and institutions, in ASCII, Latin-1 and UTF-8, and digits shaped like UIDs.
  const std::vector<std::string> kPatientLike = {
    "PIDXQLEAK7",
    "19450508.LEAKY",
    "LEAKY.LUCILLE",
    "DOE^JOHN",
    "19450508",
    "12345678",
    "1.2.19450508",
    "1.2.840.10008.5.1.4.1.1.19450508",
    "ACC20240001",
    "H\xC3\xB4pital Saint-\xC3\x89tienne",
    "M\xDCLLER^J\xDCRGEN",
    "CT_SALLE_\xC9",
    std::string("NUL\0INSIDE", 10),
    "01.2.3",
    "1..2",
    "1.2.",
    ".1.2",
    std::string(65, '1'),
    "1.2.840.10008.1.2.1\n",
    "\xFF\xFE\xFD",
  };

  bool IsPrintableAscii(const std::string& text)
  {
    for (char c : text)
    {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F)
      {
        return false;
      }
    }
    return true;
  }

  // Reverses EscapeLabelValue: "\xHH" -> the byte.
  std::string Unescape(const std::string& text)
  {
    std::string bytes;
    for (size_t i = 0; i < text.size(); i++)
    {
      if (text[i] == '\\' && i + 3 < text.size() && text[i + 1] == 'x')
      {
        bytes += static_cast<char>(std::stoi(text.substr(i + 2, 2), nullptr, 16));
        i += 3;
      }
      else
      {
        bytes += text[i];
      }
    }
    return bytes;
  }
}


TEST(LabelExposure, DicomUidGrammar)
{
  for (const char* uid : {"0", "1.2", "1.2.840.10008.1.2.1", "2.25.329800735698586629295641978511506172918", "1.0.3"})
  {
    EXPECT_TRUE(IsDicomUid(uid, strlen(uid))) << uid;
  }
  for (const char* notUid : {"", ".", "1.", ".1", "1..2", "01.2", "1.02", "1.2a", "1,2", " 1.2", "1.2 ", "PIDXQLEAK7"})
  {
    EXPECT_FALSE(IsDicomUid(notUid, strlen(notUid))) << notUid;
  }
  const std::string longest = "1." + std::string(62, '2');
  EXPECT_TRUE(IsDicomUid(longest.c_str(), longest.size()));
  const std::string tooLong = longest + "3";
  EXPECT_FALSE(IsDicomUid(tooLong.c_str(), tooLong.size()));
}


TEST(LabelExposure, StandardUidsAreShownOthersWithheld)
{
  EXPECT_EQ(nullptr, WithheldUidLabel(LabelDimension::ReceivedSyntax, "1.2.840.10008.1.2.1", 19));
  EXPECT_EQ(nullptr, WithheldUidLabel(LabelDimension::StoredSyntax, "1.2.840.10008.1.2.4.70", 22));
  EXPECT_EQ(nullptr, WithheldUidLabel(LabelDimension::SopClass, "1.2.840.10008.5.1.4.1.1.2", 25));
  EXPECT_EQ(nullptr, WithheldUidLabel(LabelDimension::SopClass, kUnknownLabel, strlen(kUnknownLabel)));
  // A SOP class is not a transfer syntax, and the reverse.
  EXPECT_STREQ(kUnlistedUidLabel, WithheldUidLabel(LabelDimension::SopClass, "1.2.840.10008.1.2.1", 19));
  EXPECT_STREQ(kUnlistedUidLabel, WithheldUidLabel(LabelDimension::ReceivedSyntax, "1.2.840.10008.5.1.4.1.1.2", 25));
  EXPECT_STREQ(kUnlistedUidLabel, WithheldUidLabel(LabelDimension::SopClass, "1.2.840.113619.4.3", 18));
  EXPECT_STREQ(kNotAUidLabel, WithheldUidLabel(LabelDimension::SopClass, "PIDXQLEAK7", 10));
  // A prefix or an extension of a standard UID is not that UID.
  EXPECT_STREQ(kUnlistedUidLabel, WithheldUidLabel(LabelDimension::ReceivedSyntax, "1.2.840.10008.1.2.4.70", 21));
  EXPECT_STREQ(kUnlistedUidLabel, WithheldUidLabel(LabelDimension::ReceivedSyntax, "1.2.840.10008.1.2.12", 20));
}


TEST(LabelExposure, GeneratedTablesAreSortedAndWellFormed)
{
  for (const auto& table : {std::make_pair(kTransferSyntaxUids, kTransferSyntaxUidsCount),
                            std::make_pair(kSopClassUids, kSopClassUidsCount)})
  {
    ASSERT_GT(table.second, 40u);
    for (size_t i = 0; i < table.second; i++)
    {
      EXPECT_TRUE(IsDicomUid(table.first[i], strlen(table.first[i]))) << table.first[i];
      if (i > 0)
      {
        EXPECT_LT(strcmp(table.first[i - 1], table.first[i]), 0) << table.first[i];
      }
    }
  }
}


TEST(LabelExposure, EscapesVisiblyAndReversibly)
{
  char target[64];
  const std::string latin1 = "CT_SALLE_\xC9";
  std::string escaped(target, EscapeLabelValue(target, sizeof(target), latin1.data(), latin1.size()));
  EXPECT_EQ("CT_SALLE_\\xC9", escaped);
  EXPECT_EQ(latin1, Unescape(escaped));
  const std::string backslash = "A\\xC9";  // a literal backslash is escaped too: no ambiguity
  escaped.assign(target, EscapeLabelValue(target, sizeof(target), backslash.data(), backslash.size()));
  EXPECT_EQ("A\\x5CxC9", escaped);
  EXPECT_EQ(backslash, Unescape(escaped));
  // Never an escape cut in two: 16 bytes of 0xC9 make 64 characters, 17 still 64.
  const std::string sixteen(16, '\xC9');
  EXPECT_EQ(64u, EscapeLabelValue(target, sizeof(target), sixteen.data(), sixteen.size()));
  const std::string seventeen = "A" + sixteen;
  EXPECT_EQ(61u, EscapeLabelValue(target, sizeof(target), seventeen.data(), seventeen.size()));
}


// Every label, fed with patient-like strings: a UID label never shows one; every label's name is
// printable ASCII, the AETs and addresses the sender's bytes, escaped.
TEST(LabelExposure, EveryLabelFedWithPatientData)
{
  LabelCatalog catalog(64);
  for (const std::string& value : kPatientLike)
  {
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      const LabelDimension dimension = static_cast<LabelDimension>(d);
      if (catalog.DictionaryOf(dimension) == nullptr)
      {
        continue;  // transport and sizeClass: fixed lists, nothing from outside
      }
      const std::string name = catalog.Name(dimension, catalog.InternValue(dimension, value.c_str()));
      EXPECT_TRUE(IsPrintableAscii(name)) << LabelDimensionName(dimension) << ": " << name;
      if (IsUidDimension(dimension))
      {
        EXPECT_TRUE(name == kNotAUidLabel || name == kUnlistedUidLabel)
          << LabelDimensionName(dimension) << ": " << name;
      }
      else
      {
        // The sender's bytes up to a NUL, cut at 64 characters once escaped.
        EXPECT_EQ(0u, std::string(value.c_str()).find(Unescape(name))) << LabelDimensionName(dimension) << ": " << name;
        EXPECT_GE(Unescape(name).size(), std::min<size_t>(strlen(value.c_str()), 16));
      }
    }
    RawLabels raw;
    raw.remoteAet = raw.remoteIp = raw.calledAet = value.c_str();
    raw.receivedSyntax = raw.storedSyntax = raw.sopClass = value.c_str();
    const InstanceLabels labels = catalog.Intern(Transport::Dicom, raw, 1000);
    for (LabelDimension dimension :
         {LabelDimension::ReceivedSyntax, LabelDimension::StoredSyntax, LabelDimension::SopClass})
    {
      const std::string name = catalog.Name(dimension, labels.Get(dimension));
      EXPECT_TRUE(name == kNotAUidLabel || name == kUnlistedUidLabel) << name;
    }
  }
  // Counted, each time, in their dimension; the stand-ins are two values at most.
  for (LabelDimension dimension :
       {LabelDimension::ReceivedSyntax, LabelDimension::StoredSyntax, LabelDimension::SopClass})
  {
    EXPECT_EQ(2 * kPatientLike.size(), catalog.DictionaryOf(dimension)->Withheld());
    EXPECT_EQ(2u, catalog.DictionaryOf(dimension)->Size());
  }
  // A standard UID is shown, and so is "(unknown)" (a failed SDK call).
  const LabelId ct = catalog.InternValue(LabelDimension::SopClass, "1.2.840.10008.5.1.4.1.1.2");
  EXPECT_EQ("1.2.840.10008.5.1.4.1.1.2", catalog.Name(LabelDimension::SopClass, ct));
  EXPECT_EQ(kUnknownLabel, catalog.Name(LabelDimension::StoredSyntax,
                                        catalog.InternValue(LabelDimension::StoredSyntax, kUnknownLabel)));
}
