// MappedText: what a std::ostream writes, byte for byte, across the growth of its mapping.
#include "Platform/MappedText.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

using namespace IngestPerf;

TEST(MappedText, HoldsWhatTheStreamWroteAcrossGrowth)
{
  MappedText text;
  EXPECT_EQ(0u, text.Size());
  std::string expected;
  {
    std::ostream stream(&text);
    for (int i = 0; i < 200000; i++)
    {
      stream << i << ',';
      stream.put(static_cast<char>('a' + i % 26));
      expected += std::to_string(i) + ',' + static_cast<char>('a' + i % 26);
    }
    const std::string block(300000, 'x');  // one write larger than a doubling
    stream.write(block.data(), static_cast<std::streamsize>(block.size()));
    expected += block;
    ASSERT_TRUE(stream.good());
  }
  ASSERT_EQ(expected.size(), text.Size());
  EXPECT_EQ(expected, std::string(text.Data(), text.Size()));
  EXPECT_GE(text.Capacity(), text.Size());
  EXPECT_EQ(0u, text.Capacity() % 4096);  // whole pages of its own, never malloc's
}
