#include "Correlation/IngestWatcher.h"

#include <gtest/gtest.h>

#include <chrono>
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
