// MappedAllocator: large arrays in pages of their own, never malloc's; small ones from operator new.
#include "Platform/MappedAllocator.h"

#include <gtest/gtest.h>

#include <malloc.h>

#include <cstdint>
#include <vector>

using namespace IngestPerf;

TEST(MappedAllocator, LargeArraysAreNotMallocs)
{
  const struct mallinfo2 before = mallinfo2();
  {
    std::vector<uint64_t, MappedAllocator<uint64_t>> large(1 << 17, 7);  // 1 MB
    const struct mallinfo2 during = mallinfo2();
    EXPECT_EQ(before.hblkhd, during.hblkhd);  // malloc mapped nothing
    EXPECT_LT(during.uordblks, before.uordblks + 64 * 1024);
    uint64_t sum = 0;
    for (uint64_t value : large)
    {
      sum += value;
    }
    EXPECT_EQ(uint64_t(7) << 17, sum);
    large.resize(large.size() * 2, 1);  // a larger mapping, the contents copied
    EXPECT_EQ(7u, large[12345]);
    EXPECT_EQ(1u, large.back());
  }
  std::vector<int, MappedAllocator<int>> small(10, 3);  // 40 bytes: operator new
  EXPECT_EQ(3, small[9]);
}
