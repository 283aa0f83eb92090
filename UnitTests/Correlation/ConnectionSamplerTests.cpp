#include "Correlation/ConnectionSampler.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

using namespace IngestPerf;

namespace
{
  constexpr uint16_t kDicom = 4242;
  constexpr uint16_t kHttp = 8042;
  constexpr int64_t kSecond = 1000000000LL;

  // Connections per port, as the test sets them.
  struct FakeTable
  {
    std::atomic<uint64_t> dicom{0};
    std::atomic<uint64_t> http{0};
    std::atomic<uint64_t> reads{0};

    OpenConnections Read(uint16_t port)
    {
      reads++;
      OpenConnections connections;
      connections.available = true;
      connections.count = port == kDicom ? dicom.load() : http.load();
      return connections;
    }
  };
}


TEST(ConnectionSampler, SummarizesTheSamplesOfASpan)
{
  FakeTable table;
  ConnectionSampler sampler(kDicom, kHttp, [&](uint16_t port) { return table.Read(port); });
  // 10 s of samples: 8 associations and 9 HTTP connections from 3 to 5 s, 1 and 2 otherwise.
  for (int64_t i = 0; i < 20; i++)
  {
    const bool busy = i >= 6 && i <= 10;
    table.dicom = busy ? 8 : 1;
    table.http = busy ? 9 : 2;
    sampler.SampleNow(i * kSecond / 2);
  }
  ConnectionSummary all = sampler.Summarize(0, 10 * kSecond, 4, 4);
  EXPECT_EQ(20u, all.samples);
  EXPECT_EQ(8u, all.dicomMax);
  EXPECT_EQ(9u, all.httpMax);
  EXPECT_EQ(5u, all.dicomOverThreads);
  EXPECT_EQ(5u, all.httpOverThreads);
  EXPECT_DOUBLE_EQ((5 * 8 + 15 * 1) / 20.0, all.dicomMean);

  // A span after the busy part sees none of it.
  ConnectionSummary after = sampler.Summarize(6 * kSecond, 10 * kSecond, 4, 4);
  EXPECT_EQ(8u, after.samples);
  EXPECT_EQ(1u, after.dicomMax);
  EXPECT_EQ(0u, after.httpOverThreads);

  EXPECT_EQ(0u, sampler.Summarize(20 * kSecond, 30 * kSecond, 4, 4).samples);
}


TEST(ConnectionSampler, KeepsTheLastHourOnly)
{
  FakeTable table;
  ConnectionSampler sampler(kDicom, kHttp, [&](uint16_t port) { return table.Read(port); });
  const int64_t total = ConnectionSampler::kCapacity + 100;
  for (int64_t i = 0; i < total; i++)
  {
    table.dicom = i < 100 ? 50 : 1;  // the first 100 samples are overwritten
    sampler.SampleNow(i * ConnectionSampler::kPeriodNs);
  }
  const ConnectionSummary summary = sampler.Summarize(0, total * ConnectionSampler::kPeriodNs, 4, 4);
  EXPECT_EQ(ConnectionSampler::kCapacity, summary.samples);
  EXPECT_EQ(1u, summary.dicomMax);
}


TEST(ConnectionSampler, UnreadableTablesTakeNoSample)
{
  ConnectionSampler sampler(kDicom, kHttp, [](uint16_t) { return OpenConnections(); });
  sampler.SampleNow(kSecond);
  EXPECT_EQ(0u, sampler.Summarize(0, 2 * kSecond, 4, 4).samples);
}


TEST(ConnectionSampler, ItsThreadSamplesUntilStopped)
{
  FakeTable table;
  table.dicom = 3;
  ConnectionSampler sampler(kDicom, kHttp, [&](uint16_t port) { return table.Read(port); });
  sampler.Start();
  sampler.Start();  // once is enough
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (table.reads.load() < 2 && std::chrono::steady_clock::now() < deadline)
  {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto stopping = std::chrono::steady_clock::now();
  sampler.Stop();
  // Stop wakes the thread: it does not wait out its period.
  EXPECT_LT(std::chrono::steady_clock::now() - stopping, std::chrono::milliseconds(400));
  const uint64_t reads = table.reads.load();
  EXPECT_GE(reads, 2u);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_EQ(reads, table.reads.load());
  EXPECT_EQ(3u, sampler.Summarize(0, INT64_MAX, 4, 4).dicomMax);
  sampler.Stop();  // idempotent
}
