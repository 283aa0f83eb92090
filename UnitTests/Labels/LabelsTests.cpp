#include "Capture/DicomMetaHeader.h"
#include "Labels/InstanceLabels.h"
#include "Labels/LabelCatalog.h"
#include "Labels/LabelDictionary.h"
#include "Metrics/StreamTable.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  // A Part 10 meta header in explicit VR little endian, as written by any DICOM toolkit.
  std::string MetaHeader(const std::string& syntax, bool withLongElementFirst = true)
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
  char uid[kMaxUidLength + 1];
  std::string file = MetaHeader("1.2.840.10008.1.2.4.70");  // odd length: NUL-padded
  ASSERT_TRUE(ReadTransferSyntax(uid, file.data(), file.size()));
  EXPECT_STREQ("1.2.840.10008.1.2.4.70", uid);
  file = MetaHeader("1.2.840.10008.1.2.1", false);
  ASSERT_TRUE(ReadTransferSyntax(uid, file.data(), file.size()));
  EXPECT_STREQ("1.2.840.10008.1.2.1", uid);
}


TEST(DicomMetaHeader, RefusesAnythingElseWithoutReadingPastTheBuffer)
{
  char uid[kMaxUidLength + 1];
  const std::string file = MetaHeader("1.2.840.10008.1.2.1");
  for (size_t cut = 0; cut < file.size() - 4; cut++)
  {
    // Every truncation either fails or finds the whole UID (ASan checks the reads).
    std::vector<char> copy(file.begin(), file.begin() + cut);
    if (ReadTransferSyntax(uid, copy.data(), copy.size()))
    {
      EXPECT_STREQ("1.2.840.10008.1.2.1", uid);
    }
  }
  EXPECT_FALSE(ReadTransferSyntax(uid, "not dicom", 9));
  EXPECT_FALSE(ReadTransferSyntax(uid, nullptr, 1000));
  std::string noMeta(128, '\0');
  noMeta += "DICM";
  noMeta += std::string("\x08\x00\x05\x00", 4);
  EXPECT_FALSE(ReadTransferSyntax(uid, noMeta.data(), noMeta.size()));
}


TEST(LabelDictionary, InternsUpToItsCapacityThenOther)
{
  LabelDictionary dictionary(3);
  const LabelId a = dictionary.Intern("CT01");
  EXPECT_GE(a, kFirstValueLabel);
  EXPECT_EQ(a, dictionary.Intern("CT01"));
  EXPECT_EQ(a, dictionary.Intern("CT01xyz", 4));
  const LabelId b = dictionary.Intern("MR02");
  const LabelId c = dictionary.Intern("US03");
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_EQ(kOtherLabel, dictionary.Intern("XA04"));
  EXPECT_EQ(1u, dictionary.Overflowed());
  EXPECT_EQ(kNoneLabel, dictionary.Intern(""));
  EXPECT_EQ(kNoneLabel, dictionary.Intern(nullptr));
  EXPECT_EQ("MR02", dictionary.Name(b));
  EXPECT_EQ("(other)", dictionary.Name(kOtherLabel));
  EXPECT_EQ("(none)", dictionary.Name(kNoneLabel));
  LabelId found;
  ASSERT_TRUE(dictionary.Find("US03", found));
  EXPECT_EQ(c, found);
  EXPECT_FALSE(dictionary.Find("XA04", found));
  EXPECT_EQ(3u, dictionary.Size());
  // A UID of 64 characters fits; longer values are cut there.
  LabelDictionary uids(2);
  const std::string uid64(64, '7');
  EXPECT_EQ(uid64, uids.Name(uids.Intern(uid64.c_str())));
  EXPECT_EQ(uids.Intern(uid64.c_str()), uids.Intern((uid64 + "999").c_str()));
}


TEST(LabelDictionary, ConcurrentInterningGivesOneIdPerValue)
{
  LabelDictionary dictionary(64);
  std::vector<std::vector<LabelId>> seen(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++)
  {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 200; round++)
      {
        for (int v = 0; v < 40; v++)
        {
          const std::string value = "AET" + std::to_string((v + t) % 40);
          const LabelId id = dictionary.Intern(value.c_str());
          if (round == 0)
          {
            seen[t].push_back(id);
          }
          ASSERT_EQ(value, dictionary.Name(id));
        }
      }
    });
  }
  for (std::thread& thread : threads)
  {
    thread.join();
  }
  EXPECT_EQ(40u, dictionary.Size());
  EXPECT_EQ(0u, dictionary.Overflowed());
  // Every thread got the same id for the same value.
  for (int t = 0; t < 8; t++)
  {
    for (int v = 0; v < 40; v++)
    {
      EXPECT_EQ(seen[0][(v + t) % 40], seen[t][v]) << "thread " << t << " value AET" << (v + t) % 40;
    }
  }
}


TEST(LabelDictionary, PreemptedWriterGivesOtherNotASecondCopy)
{
  // Where "CT01" lands in an empty dictionary of 8: its hash's slot.
  LabelDictionary probe(8);
  const size_t home = probe.Intern("CT01") - kFirstValueLabel;

  LabelDictionary dictionary(8);
  dictionary.HoldSlotForTest(home, true);  // a writer stopped half-way through that slot
  EXPECT_EQ(kOtherLabel, dictionary.Intern("CT01"));
  EXPECT_EQ(1u, dictionary.Contended());
  EXPECT_EQ(0u, dictionary.Size());  // not interned further along the probe
  dictionary.HoldSlotForTest(home, false);
  const LabelId id = dictionary.Intern("CT01");
  EXPECT_EQ(home, static_cast<size_t>(id - kFirstValueLabel));
  EXPECT_EQ(id, dictionary.Intern("CT01"));
  EXPECT_EQ(1u, dictionary.Size());
}


TEST(LabelDictionary, FullDictionaryProbesAtMostItsLimit)
{
  LabelDictionary dictionary(LabelDictionary::kMaxCapacity);
  size_t interned = 0;
  for (int v = 0; v < 1000; v++)
  {
    const std::string value = "AET" + std::to_string(v);
    const LabelId id = dictionary.Intern(value.c_str());
    if (id != kOtherLabel)
    {
      interned++;
      EXPECT_EQ(value, dictionary.Name(id));
      EXPECT_EQ(id, dictionary.Intern(value.c_str()));  // found again within the probe limit
    }
  }
  EXPECT_EQ(interned, dictionary.Size());
  EXPECT_GT(interned, LabelDictionary::kMaxCapacity * 9 / 10);  // the probe limit wastes few slots
  EXPECT_EQ(1000u - interned, dictionary.Overflowed());
}


TEST(InstanceLabels, KeyRoundTripAndFixedDimensions)
{
  InstanceLabels labels;
  labels.SetTransport(Transport::Dicom);
  labels.SetSizeClass(SizeClassOf(600 * 1024));
  labels.Set(LabelDimension::RemoteAet, 7);
  const InstanceLabels back = InstanceLabels::FromKey(labels.Key());
  EXPECT_EQ(labels.ids, back.ids);
  EXPECT_EQ(Transport::Dicom, back.GetTransport());
  EXPECT_NE(0u, labels.Key());
  InstanceLabels other;
  other.ids.fill(kOtherLabel);
  EXPECT_NE(0u, other.Key());
  EXPECT_EQ(other.ids, InstanceLabels::FromKey(other.Key()).ids);
  EXPECT_STREQ("64KiB-1MiB", SizeClassName(SizeClassOf(600 * 1024)));
  EXPECT_STREQ("<64KiB", SizeClassName(SizeClassOf(0)));
  EXPECT_STREQ(">=256MiB", SizeClassName(SizeClassOf(uint64_t(1) << 40)));
  LabelDimension dimension;
  EXPECT_TRUE(ParseLabelDimension(dimension, "calledAet"));
  EXPECT_EQ(LabelDimension::CalledAet, dimension);
  EXPECT_FALSE(ParseLabelDimension(dimension, "calledaet"));
}


TEST(LabelCatalog, NamesAndFindsEveryDimension)
{
  LabelCatalog catalog(4);
  RawLabels raw;
  raw.remoteAet = "CT01";
  raw.sopClass = "1.2.840.10008.5.1.4.1.1.2";
  const InstanceLabels labels = catalog.Intern(Transport::Dicom, raw, 100);
  EXPECT_EQ("dicom", catalog.Name(LabelDimension::Transport, labels.Get(LabelDimension::Transport)));
  EXPECT_EQ("CT01", catalog.Name(LabelDimension::RemoteAet, labels.Get(LabelDimension::RemoteAet)));
  EXPECT_EQ("(none)", catalog.Name(LabelDimension::CalledAet, labels.Get(LabelDimension::CalledAet)));
  EXPECT_EQ("<64KiB", catalog.Name(LabelDimension::SizeClass, labels.Get(LabelDimension::SizeClass)));
  LabelId id;
  ASSERT_TRUE(catalog.Find(LabelDimension::Transport, "dicom", id));
  EXPECT_EQ(labels.Get(LabelDimension::Transport), id);
  ASSERT_TRUE(catalog.Find(LabelDimension::SizeClass, "<64KiB", id));
  EXPECT_EQ(labels.Get(LabelDimension::SizeClass), id);
  EXPECT_FALSE(catalog.Find(LabelDimension::Transport, "smtp", id));
  EXPECT_EQ(nullptr, catalog.DictionaryOf(LabelDimension::Transport));
  EXPECT_NE(nullptr, catalog.DictionaryOf(LabelDimension::RemoteIp));
}


TEST(StreamTable, FindsOrClaimsAndOverflowsPerTransport)
{
  StreamTable table(4);
  std::vector<InstanceLabels> labels(6);
  for (size_t i = 0; i < labels.size(); i++)
  {
    labels[i].SetTransport(i % 2 ? Transport::Rest : Transport::Dicom);
    labels[i].Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + i));
  }
  for (const InstanceLabels& l : labels)
  {
    table.FindOrInsert(l).RecordOutcome(Outcome::Stored);
  }
  table.FindOrInsert(labels[0]).RecordOutcome(Outcome::Stored);
  EXPECT_EQ(4u, table.Used());
  EXPECT_EQ(2u, table.Overflowed());

  uint64_t total = 0;
  size_t overflowSeries = 0;
  table.ForEach([&](const InstanceLabels& l, const StreamStats& stats) {
    total += stats.outcomes[static_cast<size_t>(Outcome::Stored)].load();
    if (l.Get(LabelDimension::RemoteAet) == kOtherLabel)
    {
      overflowSeries++;
    }
  });
  EXPECT_EQ(7u, total);  // nothing lost: the overflow series hold the rest
  EXPECT_GE(overflowSeries, 1u);

  table.ResetAll();
  size_t visible = 0;
  table.ForEach([&](const InstanceLabels&, const StreamStats&) { visible++; });
  EXPECT_EQ(0u, visible);  // claimed series keep their labels but show nothing until used again
  EXPECT_EQ(4u, table.Used());
}


TEST(StreamTable, FullTableSendsNewKeysToOverflowAndCountsEachInstance)
{
  StreamTable table(200);  // larger than the probe limit
  std::vector<InstanceLabels> labels(1000);
  for (size_t i = 0; i < labels.size(); i++)
  {
    labels[i].SetTransport(Transport::Rest);
    labels[i].Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + i % 250));
    labels[i].Set(LabelDimension::RemoteIp, static_cast<LabelId>(kFirstValueLabel + i / 250));
  }
  for (const InstanceLabels& l : labels)
  {
    table.FindOrInsert(l).RecordOutcome(Outcome::Stored);
  }
  EXPECT_LE(table.Used(), 200u);
  EXPECT_GT(table.Used(), 180u);
  EXPECT_EQ(1000u - table.Used(), table.Overflowed());
  uint64_t total = 0;
  table.ForEach([&](const InstanceLabels&, const StreamStats& stats) {
    total += stats.outcomes[static_cast<size_t>(Outcome::Stored)].load();
  });
  EXPECT_EQ(1000u, total);
}


TEST(StreamTable, RepeatedOverflowingKeyIsCountedPerInstance)
{
  StreamTable table(2);
  InstanceLabels labels[3];
  for (int i = 0; i < 3; i++)
  {
    labels[i].SetTransport(Transport::Dicom);
    labels[i].Set(LabelDimension::RemoteAet, static_cast<LabelId>(kFirstValueLabel + i));
    table.FindOrInsert(labels[i]);
  }
  EXPECT_EQ(1u, table.Overflowed());
  StreamStats& overflow = table.FindOrInsert(labels[2]);  // the thread's cached overflow
  EXPECT_EQ(&overflow, &table.FindOrInsert(labels[2]));
  EXPECT_EQ(3u, table.Overflowed());
  EXPECT_NE(&overflow, &table.FindOrInsert(labels[0]));
  EXPECT_EQ(3u, table.Overflowed());
}


TEST(StreamTable, ConcurrentClaimsGiveOneSeriesPerKey)
{
  StreamTable table(64);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; t++)
  {
    threads.emplace_back([&table] {
      for (int round = 0; round < 1000; round++)
      {
        InstanceLabels labels;
        labels.SetTransport(Transport::Rest);
        labels.Set(LabelDimension::SopClass, static_cast<LabelId>(kFirstValueLabel + round % 32));
        table.FindOrInsert(labels).RecordOutcome(Outcome::Stored);
      }
    });
  }
  for (std::thread& thread : threads)
  {
    thread.join();
  }
  EXPECT_EQ(32u, table.Used());
  uint64_t total = 0;
  table.ForEach([&](const InstanceLabels&, const StreamStats& stats) {
    total += stats.outcomes[static_cast<size_t>(Outcome::Stored)].load();
  });
  EXPECT_EQ(8000u, total);
}
