#include "Correlation/IngestWatcher.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

using namespace IngestPerf;


TEST(IngestWatcher, ItsThreadCountsItsOwnCpuTimeTicksApartFromIdleWakes)
{
  IngestWatcher::Hooks hooks;
  hooks.read = [](uint16_t, uint16_t, std::vector<SocketInfo>&) { return true; };
  IngestWatcher watcher(4242, 8042, hooks);
  EXPECT_FALSE(watcher.Cost().running);
  watcher.Start();
  // Active for kQuietTicks ticks after the start (Orthanc opens its ports then): the first one
  // comes a period after the start.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (watcher.Cost().ticks == 0 && std::chrono::steady_clock::now() < deadline)
  {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const PluginThreadCost cost = watcher.Cost();
  EXPECT_TRUE(cost.running);
  EXPECT_GE(cost.ticks, 1u);
  EXPECT_GE(cost.activeCpuNs, 0);
  EXPECT_EQ(0u, cost.idleWakes);  // no wake found Orthanc idle yet
  watcher.ResetCost();
  EXPECT_EQ(0u, watcher.Cost().ticks);
  EXPECT_EQ(0, watcher.Cost().activeCpuNs);
  watcher.Stop();
  EXPECT_FALSE(watcher.Cost().running);
}


TEST(IngestWatcher, ReleasesMemoryOnItsThreadWithoutLeavingItsIdleSleep)
{
  std::atomic<int> releases{0};
  std::atomic<std::thread::id> releasedOn{};
  IngestWatcher::Hooks hooks;
  hooks.read = [](uint16_t, uint16_t, std::vector<SocketInfo>&) { return true; };
  hooks.activity = [] { return uint64_t(7); };  // Orthanc never ingests
  hooks.releaseMemory = [&] {
    releasedOn = std::this_thread::get_id();
    releases++;
  };
  IngestWatcher watcher(4242, 8042, hooks);
  watcher.Start();
  const auto waitFor = [](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline)
    {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return done();
  };
  // Active for kQuietTicks ticks after the start, then asleep.
  ASSERT_TRUE(waitFor([&] { return watcher.Cost().ticks >= uint64_t(IngestWatcher::kQuietTicks); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const uint64_t ticks = watcher.Cost().ticks;
  watcher.RequestMemoryRelease();
  ASSERT_TRUE(waitFor([&] { return releases.load() == 1; }));
  EXPECT_NE(std::this_thread::get_id(), releasedOn.load());
  EXPECT_EQ(1u, watcher.Cost().answerMemoryReleases);
  EXPECT_GE(watcher.Cost().answerMemoryCpuNs, 0);
  // The wake for the release alone: no sampling for the next seconds (Orthanc is still idle).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(ticks, watcher.Cost().ticks);
  EXPECT_EQ(1, releases.load());
  watcher.Stop();
}
