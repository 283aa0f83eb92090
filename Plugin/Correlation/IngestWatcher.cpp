#include "Correlation/IngestWatcher.h"

#include "Platform/MonotonicClock.h"

#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace IngestPerf
{
  namespace
  {
    std::atomic<IngestWatcher*> active{nullptr};

    bool ReadProcessSockets(uint16_t dicomPort, uint16_t httpPort, std::vector<SocketInfo>& sockets)
    {
      return ForEachProcessSocket(dicomPort, httpPort, [&sockets](const SocketInfo& s) { sockets.push_back(s); });
    }
  }


  void SetActiveIngestWatcher(IngestWatcher* watcher)
  {
    active.store(watcher, std::memory_order_release);
  }


  IngestWatcher* ActiveIngestWatcher()
  {
    return active.load(std::memory_order_acquire);
  }


  IngestWatcher::IngestWatcher(uint16_t dicomPort, uint16_t httpPort, Hooks hooks) :
    dicomPort_(dicomPort),
    httpPort_(httpPort),
    hooks_(std::move(hooks)),
    ring_(kCapacity)
  {
    if (!hooks_.read)
    {
      hooks_.read = ReadProcessSockets;
    }
  }


  IngestWatcher::~IngestWatcher()
  {
    Stop();
  }


  void IngestWatcher::Start()
  {
    if (thread_.joinable())
    {
      return;
    }
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    wake_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epoll_ < 0 || wake_ < 0)
    {
      throw std::runtime_error("IngestWatcher: epoll or eventfd unavailable");
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.fd = wake_;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_, &event);
    stopping_ = false;
    thread_ = std::thread([this] { Run(); });
    running_ = true;
  }


  void IngestWatcher::Stop()
  {
    stopping_ = true;
    running_ = false;
    if (wake_ >= 0)
    {
      Signal();
    }
    if (thread_.joinable())
    {
      thread_.join();
    }
    for (int* fd : {&epoll_, &wake_})
    {
      if (*fd >= 0)
      {
        close(*fd);
        *fd = -1;
      }
    }
  }


  void IngestWatcher::Signal()
  {
    const uint64_t one = 1;
    ssize_t ignored = write(wake_, &one, sizeof(one));
    (void) ignored;
  }


  void IngestWatcher::SignalOnce(std::atomic<bool>& wanted)
  {
    // A load first: the requests that find it raised write nothing, not even the flag's line.
    if (!wanted.load(std::memory_order_relaxed) && !wanted.exchange(true, std::memory_order_acq_rel))
    {
      Signal();
    }
  }


  void IngestWatcher::WakeIfSleeping()
  {
    // The common case is a fence and one load of a line the thread writes twice per idle period. The
    // fence orders the caller's record (the activity) before the load, as the thread orders its
    // store of sleeping_ before its last look at the activity: one of the two sees the other.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_relaxed) && sleeping_.exchange(false, std::memory_order_acq_rel))
    {
      Signal();
    }
  }


  void IngestWatcher::RequestReading(int64_t)
  {
    SignalOnce(readingWanted_);
  }


  void IngestWatcher::RequestDrain()
  {
    SignalOnce(drainWanted_);
  }


  void IngestWatcher::RequestCheck()
  {
    SignalOnce(checkWanted_);
  }


  void IngestWatcher::TickIfDue(int64_t nowNs)
  {
    if (nowNs >= tickDueNs_.load(std::memory_order_relaxed))
    {
      SignalOnce(tickWanted_);
    }
  }


  void IngestWatcher::OrthancStarted()
  {
    if (!startedWanted_.exchange(true, std::memory_order_acq_rel))
    {
      Signal();
    }
  }


  ConnectionSample IngestWatcher::ReadSockets(int64_t nowNs)
  {
    // The thread's own list, kept from one reading to the next: no allocation once it has grown to
    // the number of Orthanc's connections. DicomPort's first, then HttpPort's.
    std::vector<SocketInfo>& sockets = sockets_;
    sockets.clear();
    ConnectionSample sample;
    sample.ns = nowNs;
    lastReadingNs_.store(nowNs, std::memory_order_relaxed);
    if (!hooks_.read(dicomPort_, httpPort_, sockets))
    {
      return sample;
    }
    sockets.erase(
      std::remove_if(sockets.begin(), sockets.end(),
                     [](const SocketInfo& socket) { return socket.listening || socket.state != kTcpEstablished; }),
      sockets.end());
    std::stable_partition(sockets.begin(), sockets.end(),
                          [this](const SocketInfo& socket) { return socket.localPort == dicomPort_; });
    for (const SocketInfo& socket : sockets)
    {
      (socket.localPort == dicomPort_ ? sample.dicom : sample.http)++;
    }
    if (hooks_.socketsRead)
    {
      hooks_.socketsRead(sockets, nowNs);
    }
    return sample;
  }


  bool IngestWatcher::Tick(int64_t nowNs)
  {
    // Only the thread calls Tick: lastActivity_ and quietTicks_ are its own.
    const uint64_t activity = hooks_.activity ? hooks_.activity() : 0;
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
    // A reading made since the last tick (an association closed) is as good as this tick's.
    if (nowNs - lastReadingNs_.load(std::memory_order_relaxed) >= kPeriodNs / 2)
    {
      Add(ReadSockets(nowNs));
    }
    if (hooks_.tick)
    {
      hooks_.tick(nowNs);
    }
    return true;
  }


  int64_t IngestWatcher::NextWakeNs(bool idle, int64_t nextTickNs) const
  {
    // While Orthanc ingests, the hooks bring the tick when due (TickIfDue): the timer is for when
    // none comes.
    int64_t wake = idle ? INT64_MAX : nextTickNs + kTickGraceNs;
    if (readingWanted_.load(std::memory_order_relaxed))
    {
      wake = std::min(wake, lastReadingNs_.load(std::memory_order_relaxed) + kReadingPeriodNs);
    }
    return wake;
  }


  void IngestWatcher::Run()
  {
    // Its name in top, gdb and /proc: the plugin's thread, not one of Orthanc's (prctl rather than
    // pthread_setname_np, whose symbol would need glibc 2.34).
    prctl(PR_SET_NAME, "ingest-perf", 0, 0, 0);
    int64_t nextTickNs = MonotonicNowNs() + kPeriodNs;
    tickDueNs_.store(nextTickNs, std::memory_order_relaxed);
    int64_t cpuNs = ThreadCpuNowNs();
    while (!stopping_)
    {
      const bool idle = quietTicks_ > kQuietTicks;
      if (idle)
      {
        sleeping_.store(true, std::memory_order_seq_cst);
        // An activity that moved between the last tick and now would have found sleeping_ false.
        if (hooks_.activity && hooks_.activity() != lastActivity_ && sleeping_.exchange(false))
        {
          quietTicks_ = 0;
          nextTickNs = MonotonicNowNs();
          continue;
        }
      }
      // Rounded up: waking a little early would spin until the work is due.
      const int64_t beforeNs = MonotonicNowNs();
      const int64_t wakeNs = NextWakeNs(idle, nextTickNs);
      const int timeoutMs =
        wakeNs == INT64_MAX ? -1 : static_cast<int>(std::max<int64_t>(0, (wakeNs - beforeNs + 999999) / 1000000));
      epoll_event events[2];
      const int ready = epoll_wait(epoll_, events, 2, timeoutMs);
      if (stopping_)
      {
        break;
      }
      if (ready > 0)
      {
        uint64_t count;
        ssize_t ignored = read(wake_, &count, sizeof(count));
        (void) ignored;
        if (startedWanted_.load(std::memory_order_acquire) && hooks_.orthancStarted)
        {
          std::function<void()> started;
          started.swap(hooks_.orthancStarted);  // once
          try
          {
            started();
          }
          catch (...)
          {
            // A registration that threw: the hook stays as it was, and /perf/stats says so.
          }
        }
        // Woken by a hook: Orthanc ingests again.
        if (idle && (!hooks_.activity || hooks_.activity() != lastActivity_))
        {
          quietTicks_ = 0;
          nextTickNs = MonotonicNowNs();
        }
      }
      sleeping_.store(false, std::memory_order_relaxed);
      const int64_t now = MonotonicNowNs();
      bool worked = false;
      bool ticked = false;
      try
      {
        // A reading asked for, once due; a drain; a check of the associations; the tick.
        if (readingWanted_.load(std::memory_order_relaxed) &&
            now - lastReadingNs_.load(std::memory_order_relaxed) >= kReadingPeriodNs &&
            readingWanted_.exchange(false, std::memory_order_acq_rel))
        {
          Add(ReadSockets(now));
          worked = true;
        }
        if (checkWanted_.exchange(false, std::memory_order_acq_rel) && hooks_.checkConnections)
        {
          // As of after the request was taken: every filter that asked before is checked for
          // (CheckedSince), and the instances its drain holds for it are named.
          CheckConnections(MonotonicNowNs());
          worked = true;
        }
        if (drainWanted_.exchange(false, std::memory_order_acq_rel) && hooks_.drain)
        {
          hooks_.drain();
          worked = true;
        }
        if (now >= nextTickNs)
        {
          nextTickNs = now + kPeriodNs;
          ticked = Tick(now);
          worked = ticked || worked;
        }
      }
      catch (...)
      {
        // No memory, or an unreadable /proc: this pass is skipped, the next one may work.
      }
      // The next tick's time first: a hook that finds the flag down then asks for that tick.
      tickDueNs_.store(quietTicks_ > kQuietTicks ? INT64_MAX : nextTickNs, std::memory_order_relaxed);
      tickWanted_.store(false, std::memory_order_release);
      // A pass that did something is the cost of ingest (a wake for a reading not due yet is the
      // reading's); one that found nothing to do (the quiet ticks after ingest, a wake while asleep)
      // found Orthanc idle: the first of them after ingest says the thread is going back to sleep.
      const bool active = worked || readingWanted_.load(std::memory_order_relaxed);
      const int64_t cpuAfterNs = ThreadCpuNowNs();
      Account(cpuAfterNs - cpuNs, active, ticked);
      cpuNs = cpuAfterNs;
    }
  }


  void IngestWatcher::CheckConnections(int64_t nowNs)
  {
    // nowNs was read before the descriptors: what the check finds is as of then or later.
    if (hooks_.checkConnections(nowNs))
    {
      Add(ReadSockets(nowNs));  // an association closed: the one after it is read before its first OnStored
    }
    checkedFromNs_.store(nowNs, std::memory_order_release);
    if (hooks_.drain)
    {
      hooks_.drain();  // awake anyway; the instances stored before the check are named after it
    }
  }


  void IngestWatcher::Account(int64_t cpuNs, bool active, bool ticked)
  {
    if (active)
    {
      cost_.activeCpuNs.fetch_add(cpuNs, std::memory_order_relaxed);
      cost_.ticks.fetch_add(ticked ? 1 : 0, std::memory_order_relaxed);
    }
    else
    {
      cost_.idleCpuNs.fetch_add(cpuNs, std::memory_order_relaxed);
      cost_.idleWakes.fetch_add(1, std::memory_order_relaxed);
    }
  }


  PluginThreadCost IngestWatcher::Cost() const
  {
    PluginThreadCost cost;
    cost.running = running_.load(std::memory_order_relaxed);
    const auto since = [](const auto& now, const auto& base) {
      return now.load(std::memory_order_relaxed) - base.load(std::memory_order_relaxed);
    };
    cost.activeCpuNs = since(cost_.activeCpuNs, costAtReset_.activeCpuNs);
    cost.ticks = since(cost_.ticks, costAtReset_.ticks);
    cost.idleCpuNs = since(cost_.idleCpuNs, costAtReset_.idleCpuNs);
    cost.idleWakes = since(cost_.idleWakes, costAtReset_.idleWakes);
    return cost;
  }


  void IngestWatcher::ResetCost()
  {
    const auto copy = [](const auto& from, auto& to) {
      to.store(from.load(std::memory_order_relaxed), std::memory_order_relaxed);
    };
    copy(cost_.activeCpuNs, costAtReset_.activeCpuNs);
    copy(cost_.ticks, costAtReset_.ticks);
    copy(cost_.idleCpuNs, costAtReset_.idleCpuNs);
    copy(cost_.idleWakes, costAtReset_.idleWakes);
  }


  void IngestWatcher::Add(const ConnectionSample& sample)
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ring_[next_] = sample;
    next_ = (next_ + 1) % ring_.size();
    held_ = std::min(held_ + 1, ring_.size());
  }


  ConnectionSummary IngestWatcher::Summarize(int64_t fromNs, int64_t toNs, unsigned int dicomThreads,
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
      if (summary.samples == 0)
      {
        summary.last = sample;
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
