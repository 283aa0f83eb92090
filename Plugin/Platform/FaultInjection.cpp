#include "Platform/FaultInjection.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace IngestPerf
{
  namespace
  {
    FaultInjection::Settings settings;
    uint64_t sdkThreshold = 0;  // a draw below it fails; 0 never fails
    uint64_t allocThreshold = 0;
    std::atomic<uint64_t> drawIndex{0};
    std::atomic<uint64_t> sdkInjected{0};
    std::atomic<uint64_t> allocInjected{0};

    // SplitMix64 over (seed, index): independent draws without a shared generator state to lock.
    uint64_t Draw()
    {
      uint64_t z = settings.seed + drawIndex.fetch_add(1, std::memory_order_relaxed) * 0x9E3779B97F4A7C15ull;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
    }

    uint64_t Threshold(double probability)
    {
      if (probability <= 0)
      {
        return 0;
      }
      if (probability >= 1)
      {
        return UINT64_MAX;
      }
      return static_cast<uint64_t>(probability * 18446744073709551616.0);
    }

    bool ParseProbability(double& target, const std::string& value)
    {
      char* end = nullptr;
      const double parsed = strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(parsed >= 0 && parsed <= 1))
      {
        return false;
      }
      target = parsed;
      return true;
    }
  }


  bool FaultInjection::Parse(Settings& result, std::string& error, const char* text)
  {
    result = Settings();
    const std::string all = (text != nullptr) ? text : "";
    size_t start = 0;
    while (start < all.size())
    {
      size_t end = all.find(',', start);
      if (end == std::string::npos)
      {
        end = all.size();
      }
      const std::string item = all.substr(start, end - start);
      start = end + 1;
      if (item.empty())
      {
        continue;
      }
      const size_t equals = item.find('=');
      const std::string key = item.substr(0, equals);
      const std::string value = (equals == std::string::npos) ? "" : item.substr(equals + 1);
      bool ok = false;
      if (key == "sdk")
      {
        ok = ParseProbability(result.sdk, value);
      }
      else if (key == "alloc")
      {
        ok = ParseProbability(result.alloc, value);
      }
      else if (key == "seed")
      {
        char* stop = nullptr;
        result.seed = strtoull(value.c_str(), &stop, 10);
        ok = !value.empty() && *stop == '\0';
      }
      if (!ok)
      {
        error = "INGEST_PERF_FAULTS: invalid item '" + item +
                "' (expected sdk=P, alloc=P with P from 0 to 1, seed=N, separated by commas)";
        return false;
      }
    }
    return true;
  }


  void FaultInjection::Configure(const Settings& value)
  {
    settings = value;
    sdkThreshold = Threshold(value.sdk);
    allocThreshold = Threshold(value.alloc);
    drawIndex.store(0, std::memory_order_relaxed);
    sdkInjected.store(0, std::memory_order_relaxed);
    allocInjected.store(0, std::memory_order_relaxed);
  }


  const FaultInjection::Settings& FaultInjection::Current()
  {
    return settings;
  }


  bool FaultInjection::FailSdkCall()
  {
    if (sdkThreshold == 0 || Draw() >= sdkThreshold)
    {
      return false;
    }
    sdkInjected.fetch_add(1, std::memory_order_relaxed);
    return true;
  }


  void FaultInjection::MaybeFailAllocation()
  {
    if (allocThreshold != 0 && Draw() < allocThreshold)
    {
      allocInjected.fetch_add(1, std::memory_order_relaxed);
      throw std::bad_alloc();
    }
  }


  FaultInjection::Counts FaultInjection::Injected()
  {
    Counts counts;
    counts.sdkCalls = sdkInjected.load(std::memory_order_relaxed);
    counts.allocations = allocInjected.load(std::memory_order_relaxed);
    return counts;
  }
}
