// The established TCP connections to Orthanc's DicomPort and HttpPort, sampled once a second by a
// thread of the plugin's own (never on the ingest path) and kept for an hour, so that a reader sees
// what was open during a window and not only when it asks: an operator's request to a saturated
// HTTP server waits for a thread itself, until the queue it should see has drained.
//
// Only while Orthanc ingests: a tick reads the table when the count of stored instances moved since
// the last tick or in the 4 s before; an idle Orthanc costs a timed wait once a second and nothing
// else. Memory is fixed (kCapacity samples of 16 bytes). The thread reads /proc/self/net/tcp and
// tcp6 once per sample (OpenConnections.h) and takes a mutex that only readers of the summary share.
#pragma once

#include "Correlation/OpenConnections.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace IngestPerf
{
  struct ConnectionSample
  {
    int64_t ns = 0;  // monotonic
    uint32_t dicom = 0;
    uint32_t http = 0;
  };

  struct ConnectionSummary
  {
    uint64_t samples = 0;
    uint32_t dicomMax = 0;
    double dicomMean = 0;
    uint32_t httpMax = 0;
    double httpMean = 0;
    // The samples with more connections than the given pool size.
    uint64_t dicomOverThreads = 0;
    uint64_t httpOverThreads = 0;
  };

  class ConnectionSampler
  {
  public:
    // A sample costs about 2 ms of kernel time on the development machine (the kernel walks its
    // whole TCP hash table, 262,144 buckets there, to print each file): once a second while Orthanc
    // ingests is 0.2% of one core, and nothing when it does not.
    static constexpr int64_t kPeriodNs = 1000 * 1000000LL;
    static constexpr size_t kCapacity = 3600;  // one hour

    static constexpr int kQuietTicks = 4;  // ticks sampled after the last activity seen

    using Reader =
      std::function<void(uint16_t dicomPort, uint16_t httpPort, OpenConnections& dicom, OpenConnections& http)>;
    // `activity()`: a counter that moves while Orthanc ingests (stored instances); `read` counts
    // the connections to both ports (the kernel's table by default; tests inject both).
    ConnectionSampler(uint16_t dicomPort, uint16_t httpPort, std::function<uint64_t()> activity, Reader read = nullptr);
    ~ConnectionSampler();
    ConnectionSampler(const ConnectionSampler&) = delete;
    ConnectionSampler& operator=(const ConnectionSampler&) = delete;

    void Start();
    void Stop();  // joins the thread; idempotent

    // Takes one sample now (tests call it directly).
    void SampleNow(int64_t nowNs);
    // The thread's step: a sample if Orthanc ingested lately. Returns whether it sampled.
    bool Tick(int64_t nowNs);
    void Add(const ConnectionSample& sample);

    // The samples taken from `fromNs` to `toNs` (monotonic).
    ConnectionSummary Summarize(int64_t fromNs, int64_t toNs, unsigned int dicomThreads,
                                unsigned int httpThreads) const;

  private:
    void Run();

    const uint16_t dicomPort_;
    const uint16_t httpPort_;
    const std::function<uint64_t()> activity_;
    const Reader read_;
    uint64_t lastActivity_ = 0;
    int quietTicks_ = kQuietTicks + 1;  // idle until the first instance
    mutable std::mutex mutex_;
    std::vector<ConnectionSample> ring_;
    size_t next_ = 0;
    size_t held_ = 0;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
  };

  // The sampler of the running plugin, null when none runs (the routes read it).
  void SetActiveConnectionSampler(const ConnectionSampler* sampler);
  const ConnectionSampler* ActiveConnectionSampler();
}
