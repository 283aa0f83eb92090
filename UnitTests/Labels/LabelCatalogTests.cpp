#include "Labels/LabelCatalog.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

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

TEST(LabelCatalog, ValuesThatAgeOutAreNamedByTheTablesOfTheirGeneration)
{
  LabelCatalog catalog(4);
  RawLabels raw;
  raw.remoteAet = "CT_ROOM_1";
  const InstanceLabels before = catalog.Intern(Transport::Dicom, raw, 100);
  EXPECT_EQ(0u, before.generation);
  EXPECT_EQ(0u, catalog.Rotations());

  catalog.Rotate();  // CT_ROOM_1 ages out; the next value may take its id
  EXPECT_EQ(1u, catalog.Rotations());
  raw.remoteAet = "MR_ROOM_2";
  const InstanceLabels after = catalog.Intern(Transport::Dicom, raw, 100);
  EXPECT_NE(before.generation, after.generation);
  const LabelId old = before.Get(LabelDimension::RemoteAet);
  const LabelId id = after.Get(LabelDimension::RemoteAet);
  EXPECT_EQ("MR_ROOM_2", catalog.Name(LabelDimension::RemoteAet, id, after.generation));
  EXPECT_EQ("CT_ROOM_1", catalog.Name(LabelDimension::RemoteAet, old, before.generation));  // the tables of before
  EXPECT_NE("CT_ROOM_1", catalog.Name(LabelDimension::RemoteAet, old, after.generation));

  catalog.Rotate();  // twice: the tables of CT_ROOM_1 are emptied, never misnamed
  EXPECT_EQ("(other)", catalog.Name(LabelDimension::RemoteAet, old, before.generation));
  EXPECT_EQ("MR_ROOM_2", catalog.Name(LabelDimension::RemoteAet, id, after.generation));
  EXPECT_EQ("(other)", catalog.Name(LabelDimension::RemoteAet, id, kAmbiguousGeneration));
  // The fixed dimensions never age.
  EXPECT_EQ("dicom", catalog.Name(LabelDimension::Transport, before.Get(LabelDimension::Transport), before.generation));

  // Ids a hook interned before the tables turned are not taken: the strings are interned again,
  // or, without them, "(other)".
  IdentifiedLabels stale;
  stale.remoteAet = id;
  stale.current = false;
  raw.remoteAet = "US_ROOM_3";
  const InstanceLabels again = catalog.Intern(Transport::Dicom, raw, 100, stale);
  EXPECT_EQ("US_ROOM_3",
            catalog.Name(LabelDimension::RemoteAet, again.Get(LabelDimension::RemoteAet), again.generation));
  const InstanceLabels ended = catalog.InternEnded(Transport::Dicom, stale);
  EXPECT_EQ(kOtherLabel, ended.Get(LabelDimension::RemoteAet));
  EXPECT_FALSE(catalog.IsCurrent(INT64_MIN + 1));
  EXPECT_GT(catalog.MostFilled(), 0.0);
  catalog.Clear();
  EXPECT_EQ(0u, catalog.Rotations());
  EXPECT_EQ(0.0, catalog.MostFilled());
}


TEST(LabelCatalog, TheSendersOfTheLastMinuteKeepTheirNamesWhenTheOthersAgeOut)
{
  constexpr int64_t kSecond = 1000000000;
  LabelCatalog catalog(4);
  RawLabels raw;
  raw.remoteAet = "GONE_SINCE";
  raw.remoteIp = "10.0.0.1";
  const InstanceLabels gone = catalog.Intern(Transport::Dicom, raw, 100);
  catalog.MarkUsed(gone, 10 * kSecond);
  raw.remoteAet = "STILL_SENDING";
  const InstanceLabels recent = catalog.Intern(Transport::Dicom, raw, 100);  // same address, used again
  catalog.MarkUsed(recent, 100 * kSecond);
  catalog.Rotate(70 * kSecond);  // at 130 s: the values used in the minute before
  EXPECT_TRUE(catalog.Kept(recent));
  EXPECT_FALSE(catalog.Kept(gone));
  const InstanceLabels again = catalog.Intern(Transport::Dicom, raw, 100);
  EXPECT_EQ(recent.Get(LabelDimension::RemoteAet), again.Get(LabelDimension::RemoteAet));
  EXPECT_EQ(recent.Get(LabelDimension::RemoteIp), again.Get(LabelDimension::RemoteIp));
  EXPECT_EQ("STILL_SENDING", catalog.Name(LabelDimension::RemoteAet, again.Get(LabelDimension::RemoteAet)));
  EXPECT_EQ("GONE_SINCE",
            catalog.Name(LabelDimension::RemoteAet, gone.Get(LabelDimension::RemoteAet), gone.generation));
  // "(other)", "(none)" and the fixed dimensions are no values: kept whatever the ageing.
  InstanceLabels overflow = InstanceLabels::Overflow(Transport::Rest);
  EXPECT_TRUE(catalog.Kept(overflow));
  catalog.Clear();  // a reset keeps nothing
  EXPECT_FALSE(catalog.Kept(recent));
}
