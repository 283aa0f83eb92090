#include "Correlation/ConnectionSampler.h"

#include "Timeline/MonotonicClock.h"

#include <algorithm>
#include <atomic>
#include <chrono>

namespace IngestPerf
{
  namespace
  {
    std::atomic<const ConnectionSampler*> active{nullptr};
  }


  void SetActiveConnectionSampler(const ConnectionSampler* sampler)
  {
    active.store(sampler, std::memory_order_release);
  }


  const ConnectionSampler* ActiveConnectionSampler()
  {
    return active.load(std::memory_order_acquire);
  }


  ConnectionSampler::ConnectionSampler(uint16_t dicomPort, uint16_t httpPort, std::function<uint64_t()> activity,
                                       Reader read) :
    dicomPort_(dicomPort),
    httpPort_(httpPort),
    activity_(std::move(activity)),
    read_(read ? std::move(read)
               : Reader([](uint16_t dicom, uint16_t http, OpenConnections& toDicom, OpenConnections& toHttp) {
                   CountOpenConnections(dicom, http, toDicom, toHttp);
                 })),
    ring_(kCapacity)
  {
  }


  ConnectionSampler::~ConnectionSampler()
  {
    Stop();
  }


  void ConnectionSampler::Start()
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!thread_.joinable())
    {
      stopping_ = false;
      thread_ = std::thread([this] { Run(); });
    }
  }


  void ConnectionSampler::Stop()
  {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
    {
      thread_.join();
    }
  }


  void ConnectionSampler::Run()
  {
    for (;;)
    {
      try
      {
        Tick(MonotonicNowNs());
      }
      catch (...)
      {
        // An unreadable /proc (or no memory) skips a sample; the next one may work.
      }
      std::unique_lock<std::mutex> lock(mutex_);
      // On the system clock: libstdc++ waits on the steady clock with pthread_cond_clockwait, from
      // glibc 2.34, which the release must not need (BUILD-INFO: glibc 2.32). A jump of the wall
      // clock only lengthens or shortens one period.
      const auto until = std::chrono::system_clock::now() + std::chrono::nanoseconds(kPeriodNs);
      if (wake_.wait_until(lock, until, [this] { return stopping_; }))
      {
        return;
      }
    }
  }


  bool ConnectionSampler::Tick(int64_t nowNs)
  {
    // Only the thread calls Tick: lastActivity_ and quietTicks_ are its own.
    const uint64_t activity = activity_ ? activity_() : 0;
    if (activity != lastActivity_)
    {
      lastActivity_ = activity;
      quietTicks_ = 0;
    }
    else if (quietTicks_ <= kQuietTicks)
    {
      quietTicks_++;
    }
    if (quietTicks_ > kQuietTicks)
    {
      return false;
    }
    SampleNow(nowNs);
    return true;
  }


  void ConnectionSampler::SampleNow(int64_t nowNs)
  {
    OpenConnections dicom;
    OpenConnections http;
    read_(dicomPort_, httpPort_, dicom, http);
    if (!dicom.available && !http.available)
    {
      return;
    }
    ConnectionSample sample;
    sample.ns = nowNs;
    sample.dicom = static_cast<uint32_t>(std::min<uint64_t>(dicom.count, UINT32_MAX));
    sample.http = static_cast<uint32_t>(std::min<uint64_t>(http.count, UINT32_MAX));
    Add(sample);
  }


  void ConnectionSampler::Add(const ConnectionSample& sample)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ring_[next_] = sample;
    next_ = (next_ + 1) % ring_.size();
    held_ = std::min(held_ + 1, ring_.size());
  }


  ConnectionSummary ConnectionSampler::Summarize(int64_t fromNs, int64_t toNs, unsigned int dicomThreads,
                                                 unsigned int httpThreads) const
  {
    ConnectionSummary summary;
    double dicomSum = 0;
    double httpSum = 0;
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < held_; i++)
    {
      const ConnectionSample& sample = ring_[(next_ + ring_.size() - 1 - i) % ring_.size()];
      if (sample.ns < fromNs)
      {
        break;  // newest first: the rest is older
      }
      if (sample.ns > toNs)
      {
        continue;
      }
      summary.samples++;
      summary.dicomMax = std::max(summary.dicomMax, sample.dicom);
      summary.httpMax = std::max(summary.httpMax, sample.http);
      dicomSum += sample.dicom;
      httpSum += sample.http;
      summary.dicomOverThreads += sample.dicom > dicomThreads ? 1 : 0;
      summary.httpOverThreads += sample.http > httpThreads ? 1 : 0;
    }
    if (summary.samples > 0)
    {
      summary.dicomMean = dicomSum / static_cast<double>(summary.samples);
      summary.httpMean = httpSum / static_cast<double>(summary.samples);
    }
    return summary;
  }
}
