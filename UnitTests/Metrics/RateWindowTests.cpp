#include "Metrics/RateWindow.h"

#include <gtest/gtest.h>

using IngestPerf::RateWindow;

TEST(RateWindow, SumsWholeSecondsBeforeNow)
{
  RateWindow window;
  window.Record(1000, 10);
  window.Record(1000, 20);
  window.Record(1005, 5);
  window.Record(1010, 100);  // the current second: left out
  const RateWindow::Totals last10 = window.Sum(1010, 10);
  EXPECT_EQ(3u, last10.instances);
  EXPECT_EQ(35u, last10.bytes);
  const RateWindow::Totals last5 = window.Sum(1010, 5);
  EXPECT_EQ(1u, last5.instances);
  EXPECT_EQ(5u, last5.bytes);
}


TEST(RateWindow, ASlotReusedSixtyFourSecondsLaterStartsFromZero)
{
  RateWindow window;
  window.Record(100, 1000);
  window.Record(164, 1);  // same slot
  const RateWindow::Totals totals = window.Sum(165, 60);
  EXPECT_EQ(1u, totals.instances);
  EXPECT_EQ(1u, totals.bytes);
  // And the old second is not visible from a later window either.
  EXPECT_EQ(0u, window.Sum(101 + 64 * 3, 60).instances);
}


TEST(RateWindow, ResetAndClamping)
{
  RateWindow window;
  window.Record(50, 7);
  window.Reset();
  EXPECT_EQ(0u, window.Sum(51, 60).instances);
  window.Record(50, 7);
  EXPECT_EQ(1u, window.Sum(51, 1000).instances);  // clamped to 60 s
  EXPECT_EQ(1u, window.Sum(51, 0).instances);     // clamped to 1 s
  EXPECT_EQ(0u, window.Sum(120, 60).instances);   // out of the window
}
