#include "Labels/LabelDictionary.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

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


// Found by Fuzzing/LabelDictionaryFuzzer (minimized: the value "(other)"): a calling AET or UID
// spelled like a reserved label got a slot of its own, so the answer showed two groups named
// "(other)", and the filter remoteAet=(other) selected the overflow, never that value. Such a
// value is now the reserved label it is spelled as, and takes no slot.
TEST(LabelDictionary, AValueSpelledLikeAReservedLabelIsThatLabel)
{
  LabelDictionary dictionary(3);
  EXPECT_EQ(kOtherLabel, dictionary.Intern("(other)"));
  EXPECT_EQ(kNoneLabel, dictionary.Intern("(none)"));
  EXPECT_EQ(kOtherLabel, dictionary.Intern("(other)xyz", 7));
  EXPECT_EQ(0u, dictionary.Size());
  EXPECT_EQ(0u, dictionary.Overflowed());  // not an overflow: no slot was wanted
  const LabelId near = dictionary.Intern("(other");
  ASSERT_GE(near, kFirstValueLabel);
  LabelId found;
  ASSERT_TRUE(dictionary.Find(dictionary.Name(near), found));
  EXPECT_EQ(near, found);
  ASSERT_TRUE(dictionary.Find("(other)", found));
  EXPECT_EQ(kOtherLabel, found);
}


TEST(LabelDictionary, ClearForgetsEveryValueAndTheCountersAndLearnsAgain)
{
  LabelDictionary dictionary(2);
  const LabelId a = dictionary.Intern("CT_A");
  dictionary.Intern("CT_B");
  EXPECT_EQ(kOtherLabel, dictionary.Intern("CT_C"));  // full
  EXPECT_EQ(1u, dictionary.Overflowed());
  dictionary.Clear();
  LabelId found;
  EXPECT_FALSE(dictionary.Find("CT_A", found));
  EXPECT_EQ(0u, dictionary.Size());
  EXPECT_EQ(0u, dictionary.Overflowed());
  const LabelId c = dictionary.Intern("CT_C");  // the sender of now is named
  EXPECT_NE(kOtherLabel, c);
  EXPECT_EQ("CT_C", dictionary.Name(c));
  EXPECT_NE(kOtherLabel, dictionary.Intern("CT_A"));
  EXPECT_EQ(2u, dictionary.Size());
  dictionary.Clear();  // the table of before is used again, emptied
  EXPECT_EQ(0u, dictionary.Size());
  EXPECT_EQ(a, dictionary.Intern("CT_A"));
}


TEST(LabelDictionary, ValuesUsedRecentlyKeepTheirIdsWhenTheOthersAgeOut)
{
  // A dictionary that hashes every value near every other (capacity 4): a kept value may sit past
  // the slot of one that aged out, and its lookup must pass that slot, never intern it again.
  LabelDictionary dictionary(4);
  const LabelId old1 = dictionary.Intern("OLD_1");
  const LabelId old2 = dictionary.Intern("OLD_2");
  const LabelId recent1 = dictionary.Intern("RECENT_1");
  const LabelId recent2 = dictionary.Intern("RECENT_2");
  for (const LabelId id : {old1, old2})
  {
    dictionary.MarkUsed(id, 10);
  }
  for (const LabelId id : {recent1, recent2})
  {
    dictionary.MarkUsed(id, 100);
  }
  dictionary.MarkUsed(old1, 50);
  dictionary.Rotate(100);  // used at 100 or later: kept
  EXPECT_FALSE(dictionary.Kept(old1));
  EXPECT_FALSE(dictionary.Kept(old2));
  EXPECT_TRUE(dictionary.Kept(recent1));
  EXPECT_TRUE(dictionary.Kept(recent2));
  EXPECT_EQ(2u, dictionary.Size());
  EXPECT_EQ(recent1, dictionary.Intern("RECENT_1"));  // same ids, whatever slots aged out before them
  EXPECT_EQ(recent2, dictionary.Intern("RECENT_2"));
  EXPECT_EQ("RECENT_1", dictionary.Name(recent1));
  EXPECT_EQ("OLD_1", dictionary.Name(old1, true));  // the table of before names what aged out
  // The slots that aged out take new values; every value has one id.
  const LabelId new1 = dictionary.Intern("NEW_1");
  const LabelId new2 = dictionary.Intern("NEW_2");
  EXPECT_NE(kOtherLabel, new1);
  EXPECT_NE(kOtherLabel, new2);
  EXPECT_EQ(kOtherLabel, dictionary.Intern("NEW_3"));  // full again
  EXPECT_EQ(4u, dictionary.Size());
  for (const char* value : {"RECENT_1", "RECENT_2", "NEW_1", "NEW_2"})
  {
    LabelId found;
    ASSERT_TRUE(dictionary.Find(value, found)) << value;
    EXPECT_EQ(found, dictionary.Intern(value)) << value;
  }
  // Nothing used since: the next ageing keeps none, and a reset keeps none either.
  dictionary.Rotate(300);
  EXPECT_EQ(0u, dictionary.Size());
  EXPECT_FALSE(dictionary.Kept(recent1));
  dictionary.MarkUsed(dictionary.Intern("RECENT_1"), 400);
  dictionary.Clear();
  EXPECT_EQ(0u, dictionary.Size());
  EXPECT_FALSE(dictionary.Kept(recent1));
}


TEST(LabelDictionary, ConcurrentInterningAfterAnAgeingGivesOneIdPerValue)
{
  // Retired slots are claimed by new values while kept ones are looked up, on 4 threads.
  LabelDictionary dictionary(32);
  for (int i = 0; i < 32; i++)
  {
    dictionary.MarkUsed(dictionary.Intern(("V" + std::to_string(i)).c_str()), i % 2 == 0 ? 2 : 1);
  }
  dictionary.Rotate(2);  // the even ones stay
  ASSERT_EQ(16u, dictionary.Size());
  std::vector<std::vector<LabelId>> ids(4, std::vector<LabelId>(48));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < ids.size(); t++)
  {
    threads.emplace_back([&dictionary, &ids, t] {
      for (int i = 0; i < 48; i++)
      {
        const int value = (i * 7 + static_cast<int>(t) * 5) % 48;  // kept, aged out and new ones
        ids[t][value] = dictionary.Intern(("V" + std::to_string(value)).c_str());
      }
    });
  }
  for (std::thread& thread : threads)
  {
    thread.join();
  }
  std::set<LabelId> distinct;
  for (int value = 0; value < 48; value++)
  {
    for (size_t t = 1; t < ids.size(); t++)
    {
      EXPECT_EQ(ids[0][value], ids[t][value]) << value;
    }
    if (ids[0][value] != kOtherLabel && ids[0][value] != kUnidentified)
    {
      EXPECT_TRUE(distinct.insert(ids[0][value]).second) << value;  // never two values with one id
      EXPECT_EQ("V" + std::to_string(value), dictionary.Name(ids[0][value]));
    }
  }
  EXPECT_EQ(32u, distinct.size());
  for (int i = 0; i < 32; i += 2)
  {
    LabelId found;
    ASSERT_TRUE(dictionary.Find("V" + std::to_string(i), found));
    EXPECT_TRUE(dictionary.Kept(found));
  }
}
