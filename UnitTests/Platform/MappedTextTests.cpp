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


// The pages of an answer of at most 1 MiB are the next answer's: written over, never read before;
// a larger answer's are unmapped, and the larger spare is kept of two.
TEST(MappedText, NextTextTakesThePagesOfTheLastUpToOneMebibyte)
{
  MappedText::ReleaseSpare();
  const char* first = nullptr;
  {
    MappedText text;
    const std::string long200k(200000, 'a');
    text.Append(long200k.data(), long200k.size());
    first = text.Data();
  }
  {
    MappedText text;
    text.Append("next", 4);
    EXPECT_EQ(first, text.Data());  // the same pages
    EXPECT_EQ(4u, text.Size());
    EXPECT_EQ("next", std::string(text.Data(), text.Size()));
    EXPECT_EQ(256u * 1024, text.Capacity());
    {
      MappedText other;  // while the pages are taken: a mapping of its own
      other.Append("x", 1);
      EXPECT_NE(first, other.Data());
      EXPECT_EQ(64u * 1024, other.Capacity());
    }  // gives back 64 KiB: the spare
  }    // gives back 256 KiB: kept instead of the 64 KiB
  {
    MappedText text;
    text.Append("y", 1);
    EXPECT_EQ(256u * 1024, text.Capacity());
    const std::string large(3 * 1024 * 1024, 'z');
    text.Append(large.data(), large.size());
    EXPECT_EQ(4u * 1024 * 1024, text.Capacity());
  }  // 4 MiB: unmapped, not kept
  {
    MappedText text;
    text.Append("z", 1);
    EXPECT_EQ(64u * 1024, text.Capacity());
  }
  MappedText::ReleaseSpare();
}
