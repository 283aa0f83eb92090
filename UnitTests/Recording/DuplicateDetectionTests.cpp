#include "Recording/DuplicateDetection.h"

#include <gtest/gtest.h>

#include <ctime>

using namespace IngestPerf;

TEST(DuplicateDetection, ParsesOrthancReceptionDatesAsUtc)
{
  int64_t seconds = -1;
  ASSERT_TRUE(ParseReceptionDate(seconds, "19700101T000000"));
  EXPECT_EQ(0, seconds);

  for (const char* text : {"20261121T235959", "20000229T120000", "21000301T000001", "19991231T235959"})
  {
    struct tm parts = {};
    ASSERT_TRUE(strptime(text, "%Y%m%dT%H%M%S", &parts) != nullptr);
    ASSERT_TRUE(ParseReceptionDate(seconds, text)) << text;
    EXPECT_EQ(static_cast<int64_t>(timegm(&parts)), seconds) << text;
  }
}


TEST(DuplicateDetection, RejectsAnythingElse)
{
  int64_t seconds = 123;
  for (const char* text : {"", "2026", "20261121", "20261121T2359", "20261121T235959Z", "20261121 235959",
                           "20261321T000000", "20261100T000000", "20261121T240000", "2026112aT000000"})
  {
    EXPECT_FALSE(ParseReceptionDate(seconds, text)) << text;
  }
  EXPECT_FALSE(ParseReceptionDate(seconds, nullptr));
  EXPECT_EQ(123, seconds);
}


// Found by Fuzzing/ReceptionDateFuzzer: 2200 is no leap year, yet its 29th of February was taken
// for the 1st of March. Orthanc never writes a day a month does not have, nor a leap second.
TEST(DuplicateDetection, RejectsDaysTheMonthDoesNotHave)
{
  int64_t seconds = 123;
  for (const char* text :
       {"22000229T120000", "20260229T000000", "20260431T000000", "20261131T120000", "20261231T235960"})
  {
    EXPECT_FALSE(ParseReceptionDate(seconds, text)) << text;
  }
  EXPECT_EQ(123, seconds);
  for (const char* text : {"20000229T000000", "20240229T235959", "20260131T000000", "20261231T235959"})
  {
    EXPECT_TRUE(ParseReceptionDate(seconds, text)) << text;
  }
}


namespace
{
  constexpr int64_t kS = 1000000000;
  constexpr int64_t kMs = 1000000;

  DuplicateEvidence Evidence(int64_t reception, int64_t startWallNs)
  {
    return DuplicateEvidence{reception, startWallNs, false, 0};
  }

  DuplicateEvidence WithChange(int64_t reception, int64_t startWallNs, int64_t changeWallNs)
  {
    return DuplicateEvidence{reception, startWallNs, true, changeWallNs};
  }
}


TEST(DuplicateDetection, ReceivedInAnEarlierSecondIsADuplicate)
{
  EXPECT_TRUE(IsAlreadyStored(Evidence(100, 101 * kS + 500 * kMs)));
  EXPECT_TRUE(IsAlreadyStored(Evidence(99, 101 * kS)));
}


TEST(DuplicateDetection, CommittedAfterTheStartIsNew)
{
  EXPECT_FALSE(IsAlreadyStored(Evidence(102, 101 * kS + 500 * kMs)));
  // even with an old change of a deleted earlier copy
  EXPECT_FALSE(IsAlreadyStored(WithChange(102, 101 * kS + 500 * kMs, 50 * kS)));
}


TEST(DuplicateDetection, OrthancsCoarseClockIsToleratedAtASecondBoundary)
{
  // Started 3 ms into second 101, committed 1 ms later while time() still said 100.
  EXPECT_FALSE(IsAlreadyStored(Evidence(100, 101 * kS + 3 * kMs)));
}


TEST(DuplicateDetection, InTheSameSecondTheEarlierChangeDecides)
{
  const int64_t start = 101 * kS + 600 * kMs;
  // A new instance: no earlier change.
  EXPECT_FALSE(IsAlreadyStored(Evidence(101, start)));
  // The earlier store of this second, its change delivered at 101.2 s: a duplicate.
  EXPECT_TRUE(IsAlreadyStored(WithChange(101, start, 101 * kS + 200 * kMs)));
  // The change of a copy deleted long ago: this is a new store (re-sent after DELETE).
  EXPECT_FALSE(IsAlreadyStored(WithChange(101, start, 40 * kS)));
}


TEST(DuplicateDetection, NoMetadataIsNeverADuplicate)
{
  EXPECT_FALSE(IsAlreadyStored(WithChange(-1, 101 * kS, 100 * kS)));
}
