// Injected faults, for the test build only (CMake option INGEST_PERF_FAULT_INJECTION, which
// builds libOrthancIngestPerfFaults.so beside the plugin; the release plugin never contains this
// code). Read once at start-up from the environment variable INGEST_PERF_FAULTS, for instance
// "sdk=0.2,alloc=0.1,seed=7":
//   sdk    probability that an instance accessor of the hot path (Platform/OrthancSdk.h) fails the way
//          the SDK reports a failure: null, -1 or an unknown origin
//   alloc  probability that a step of building a /perf/stats or /perf/reset answer throws
//          std::bad_alloc
//   seed   the seed of the draws (one sequence shared by all threads: which call gets which draw
//          depends on the interleaving, how many fail does not, in expectation)
#pragma once

#include <cstdint>
#include <string>

// The seams: nothing at all in the release build.
#ifdef INGEST_PERF_FAULT_INJECTION
// In an accessor of Platform/OrthancSdk.h: return the SDK's own failure value.
#define INGEST_PERF_INJECT_SDK_FAULT(failure)                                                                          \
  if (::IngestPerf::FaultInjection::FailSdkCall())                                                                     \
  {                                                                                                                    \
    return failure;                                                                                                    \
  }
// On the path building a REST answer: throw std::bad_alloc.
#define INGEST_PERF_INJECT_ALLOCATION_FAULT() ::IngestPerf::FaultInjection::MaybeFailAllocation()
#else
#define INGEST_PERF_INJECT_SDK_FAULT(failure)
#define INGEST_PERF_INJECT_ALLOCATION_FAULT()
#endif

namespace IngestPerf
{
  namespace FaultInjection
  {
    struct Settings
    {
      double sdk = 0;
      double alloc = 0;
      uint64_t seed = 1;
    };

    // False with a reason for a malformed text; an empty or null text is no fault at all.
    bool Parse(Settings& settings, std::string& error, const char* text);

    // Installs the settings and zeroes the counts.
    void Configure(const Settings& settings);
    const Settings& Current();

    // One draw each: true (counted) when this call is to fail.
    bool FailSdkCall();
    // Throws std::bad_alloc (counted) when this allocation is to fail.
    void MaybeFailAllocation();

    struct Counts
    {
      uint64_t sdkCalls = 0;     // accessor calls made to fail
      uint64_t allocations = 0;  // std::bad_alloc thrown
    };
    Counts Injected();
  }
}
