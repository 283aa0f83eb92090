#include "Correlation/IngestWatcher.h"

#include <gtest/gtest.h>

#include "Platform/MonotonicClock.h"

#include <sys/prctl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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


namespace
{
  bool WaitFor(const std::function<bool()>& done)
  {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!done() && std::chrono::steady_clock::now() < deadline)
    {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return done();
  }

  SocketInfo Connection(uint16_t port, const char* peer)
  {
    SocketInfo socket;
    socket.localPort = port;
    socket.state = kTcpEstablished;
    snprintf(socket.peer, sizeof(socket.peer), "%s", peer);
    return socket;
  }
}


TEST(IngestWatcher, OnItsOwnNamedThreadItTakesTheLateHooksOnceAndReadsOnRequestAtABoundedRate)
{
  std::atomic<int> started{0};
  std::atomic<int> readings{0};
  std::atomic<int64_t> lastReadingNs{0};
  std::atomic<bool> named{false};
  std::atomic<std::thread::id> startedOn{};
  std::vector<uint16_t> ports;  // of the last reading, written on the thread
  std::mutex portsMutex;
  IngestWatcher::Hooks hooks;
  hooks.read = [](uint16_t, uint16_t, std::vector<SocketInfo>& sockets) {
    sockets.push_back(Connection(8042, "10.0.0.2"));
    sockets.push_back(Connection(4242, "10.0.0.1"));
    SocketInfo listener = Connection(4242, "");
    listener.listening = true;
    sockets.push_back(listener);
    return true;
  };
  hooks.socketsRead = [&](const std::vector<SocketInfo>& sockets, int64_t nowNs) {
    lastReadingNs = nowNs;
    std::lock_guard<std::mutex> lock(portsMutex);
    ports.clear();
    for (const SocketInfo& socket : sockets)
    {
      ports.push_back(socket.localPort);
    }
    readings++;
  };
  hooks.activity = [] { return uint64_t(7); };  // Orthanc never ingests
  hooks.orthancStarted = [&] {
    char name[32] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    named = std::string(name) == "ingest-perf";
    startedOn = std::this_thread::get_id();
    started++;
  };
  IngestWatcher watcher(4242, 8042, hooks);
  watcher.Start();
  // Active for kQuietTicks ticks after the start, then asleep.
  ASSERT_TRUE(WaitFor([&] { return watcher.Cost().ticks >= uint64_t(IngestWatcher::kQuietTicks); }));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  {
    std::lock_guard<std::mutex> lock(portsMutex);
    EXPECT_EQ((std::vector<uint16_t>{4242, 8042}), ports);  // connections only, DicomPort's first
  }

  watcher.OrthancStarted();
  watcher.OrthancStarted();
  ASSERT_TRUE(WaitFor([&] { return started.load() == 1; }));
  EXPECT_NE(std::this_thread::get_id(), startedOn.load());
  EXPECT_TRUE(named.load());

  // A reading on request, while idle, soon; requests made meanwhile are one more reading, no sooner
  // than kReadingPeriodNs after the last one.
  const int before = readings.load();
  watcher.RequestReading(MonotonicNowNs());
  ASSERT_TRUE(WaitFor([&] { return readings.load() == before + 1; }));
  const int64_t first = lastReadingNs.load();
  watcher.RequestReading(MonotonicNowNs());
  watcher.RequestReading(MonotonicNowNs());
  ASSERT_TRUE(WaitFor([&] { return readings.load() == before + 2; }));
  EXPECT_GE(lastReadingNs.load() - first, IngestWatcher::kReadingPeriodNs);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(before + 2, readings.load());
  watcher.OrthancStarted();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(1, started.load());  // once
  watcher.Stop();
}
