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

  // Connections per port, and instances stored, as the test sets them.
  struct FakeTable
  {
    std::atomic<uint64_t> dicom{0};
    std::atomic<uint64_t> http{0};
    std::atomic<uint64_t> reads{0};
    std::atomic<uint64_t> stored{0};

    void Read(uint16_t dicomPort, uint16_t httpPort, OpenConnections& toDicom, OpenConnections& toHttp)
    {
      EXPECT_EQ(kDicom, dicomPort);
      EXPECT_EQ(kHttp, httpPort);
      reads++;
      toDicom.available = toHttp.available = true;
      toDicom.count = dicom.load();
      toHttp.count = http.load();
    }
  };


}


TEST(ConnectionSampler, SummarizesTheSamplesOfASpan)
{
  FakeTable table;
  ConnectionSampler sampler(
    kDicom, kHttp, [&table] { return table.stored.load(); },
    [&table](uint16_t d, uint16_t h, OpenConnections& a, OpenConnections& b) { table.Read(d, h, a, b); });
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
  ConnectionSampler sampler(
    kDicom, kHttp, [&table] { return table.stored.load(); },
    [&table](uint16_t d, uint16_t h, OpenConnections& a, OpenConnections& b) { table.Read(d, h, a, b); });
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
  ConnectionSampler sampler(kDicom, kHttp, nullptr, [](uint16_t, uint16_t, OpenConnections&, OpenConnections&) {});
  sampler.SampleNow(kSecond);
  EXPECT_EQ(0u, sampler.Summarize(0, 2 * kSecond, 4, 4).samples);
}


TEST(ConnectionSampler, ItSamplesOnlyWhileOrthancIngests)
{
  FakeTable table;
  ConnectionSampler sampler(
    kDicom, kHttp, [&table] { return table.stored.load(); },
    [&table](uint16_t d, uint16_t h, OpenConnections& a, OpenConnections& b) { table.Read(d, h, a, b); });
  // Idle from the start: no reading of the table at all.
  for (int i = 0; i < 10; i++)
  {
    EXPECT_FALSE(sampler.Tick(i * ConnectionSampler::kPeriodNs));
  }
  EXPECT_EQ(0u, table.reads.load());
  // An instance stored: this tick and the next kQuietTicks sample, then it rests again.
  table.stored = 1;
  int sampled = 0;
  for (int i = 10; i < 20; i++)
  {
    sampled += sampler.Tick(i * ConnectionSampler::kPeriodNs) ? 1 : 0;
  }
  EXPECT_EQ(1 + ConnectionSampler::kQuietTicks, sampled);
  EXPECT_EQ(static_cast<uint64_t>(sampled), table.reads.load());
  // Ingest going on: every tick samples.
  for (int i = 20; i < 30; i++)
  {
    table.stored++;
    EXPECT_TRUE(sampler.Tick(i * ConnectionSampler::kPeriodNs));
  }
}


TEST(ConnectionSampler, ItsThreadSamplesUntilStopped)
{
  FakeTable table;
  table.dicom = 3;
  table.stored = 7;  // Orthanc has ingested: the thread's first tick samples
  ConnectionSampler sampler(
    kDicom, kHttp, [&table] { return table.stored.load(); },
    [&table](uint16_t d, uint16_t h, OpenConnections& a, OpenConnections& b) { table.Read(d, h, a, b); });
  sampler.Start();
  sampler.Start();  // once is enough
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (table.reads.load() < 2 && std::chrono::steady_clock::now() < deadline)
  {
    table.stored++;
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
