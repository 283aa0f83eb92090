// The established TCP connections to Orthanc's DicomPort and HttpPort, sampled twice a second by a
// thread of the plugin's own (never on the ingest path) and kept for an hour, so that a reader sees
// what was open during a window and not only when it asks: an operator's request to a saturated
// HTTP server waits for a thread itself, until the queue it should see has drained.
//
// Memory is fixed (kCapacity samples of 16 bytes). The thread only reads /proc/self/net/tcp and
// tcp6 (OpenConnections.h) and takes a mutex that only readers of the summary share.
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
    static constexpr int64_t kPeriodNs = 500 * 1000000LL;
    static constexpr size_t kCapacity = 7200;  // one hour

    // `read(port)` counts the connections to a port (ReadOpenConnections by default; tests inject).
    ConnectionSampler(uint16_t dicomPort, uint16_t httpPort,
                      std::function<OpenConnections(uint16_t)> read = ReadOpenConnections);
    ~ConnectionSampler();
    ConnectionSampler(const ConnectionSampler&) = delete;
    ConnectionSampler& operator=(const ConnectionSampler&) = delete;

    void Start();
    void Stop();  // joins the thread; idempotent

    // Takes one sample now (the thread's step; tests call it directly).
    void SampleNow(int64_t nowNs);
    void Add(const ConnectionSample& sample);

    // The samples taken from `fromNs` to `toNs` (monotonic).
    ConnectionSummary Summarize(int64_t fromNs, int64_t toNs, unsigned int dicomThreads,
                                unsigned int httpThreads) const;

  private:
    void Run();

    const uint16_t dicomPort_;
    const uint16_t httpPort_;
    const std::function<OpenConnections(uint16_t)> read_;
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
