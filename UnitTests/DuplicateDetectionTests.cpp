#include "DuplicateDetection.h"

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


TEST(DuplicateDetection, DecidesByReceptionDateThenByTheChange)
{
  // Received in an earlier second than this ingest started: an earlier store.
  EXPECT_TRUE(IsAlreadyStored({100, 101, false}));
  // Committed after this ingest started: this store.
  EXPECT_FALSE(IsAlreadyStored({102, 101, false}));
  EXPECT_FALSE(IsAlreadyStored({102, 101, true}));
  // Same second: the NewInstance change decides.
  EXPECT_FALSE(IsAlreadyStored({101, 101, false}));
  EXPECT_TRUE(IsAlreadyStored({101, 101, true}));
  // No metadata: never claim a duplicate.
  EXPECT_FALSE(IsAlreadyStored({-1, 101, true}));
}
