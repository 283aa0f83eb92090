#include "Recording/RecordConcluder.h"

#include <dirent.h>

#include <cstdlib>
#include <set>
#include <vector>

namespace IngestPerf
{
  RecordConcluder::RecordConcluder(const ThreadTimelines& timelines, TimelineSink& sink, uint16_t dicomPort,
                                   uint16_t httpPort, Probes probes) :
    timelines_(timelines),
    sink_(sink),
    dicomPort_(dicomPort),
    httpPort_(httpPort),
    probes_(std::move(probes))
  {
    if (!probes_.activity)
    {
      probes_.activity = ReadThreadActivity;
    }
    if (!probes_.threads)
    {
      probes_.threads = ProcessThreads;
    }
    if (!probes_.socket)
    {
      const uint16_t dicom = dicomPort_;
      const uint16_t http = httpPort_;
      probes_.socket = [dicom, http](int fd, SocketInfo& socket) { return DescribeSocket(fd, dicom, http, socket); };
    }
  }


  bool RecordConcluder::HasEnded(const OpenRecordView& view, uint32_t thread, const ThreadActivity& activity,
                                 int64_t nowNs, const Waits& idle, int64_t& restInProgress)
  {
    if (activity.kind == ThreadActivity::Kind::Blocked)
    {
      const int fd = activity.WaitedDescriptor();
      SocketInfo socket;
      if (fd >= 0 && probes_.socket(fd, socket) && !socket.listening)
      {
        if (socket.localPort == dicomPort_)
        {
          return true;  // an association's next command (or its release): out of any store
        }
        if (socket.localPort == httpPort_)
        {
          if (view.stage != RecordStage::Receiving)
          {
            return true;  // answering, or reading another request: the instance's store is over
          }
          // Still reading this upload, unless the connection answered it: data sent after the last
          // data received, and not at the very start (civetweb's "100 Continue").
          const int64_t ageMs = (nowNs - view.sinceNs) / 1000000;
          return socket.state != kTcpEstablished ||
                 (socket.msSinceDataSent < socket.msSinceDataReceived && ageMs - socket.msSinceDataSent > 50);
        }
      }
      uint64_t address = 0;
      bool timed = false;
      if (activity.IsFutexWait(address, timed))
      {
        const auto waiters = idle.find(std::make_pair(address, timed));
        // The record's own thread is one of the waiters counted (when the threads could be listed).
        const bool shared = waiters != idle.end() && waiters->second >= kIdlePeers + 1;
        if (view.stage == RecordStage::Receiving)
        {
          return shared;  // no store yet: an HTTP thread waiting with its idle fellows has no request
        }
        if (shared && timed && (view.transport == Transport::Dicom || view.transport == Transport::Job))
        {
          // A pool's timed wait for work, seen at two passes for the same record: its store is over.
          const auto key = std::make_pair(thread, view.handle);
          const auto seen = seenIdle_.find(key);
          if (seen != seenIdle_.end() && seen->second == address)
          {
            return true;
          }
          seenIdle_[key] = address;
          return false;
        }
      }
    }
    if (view.restApiRequest && probes_.restRequestsInProgress)
    {
      if (restInProgress == -2)
      {
        restInProgress = probes_.restRequestsInProgress();  // asked once per pass, and only if needed
      }
      return restInProgress == 0;
    }
    return false;
  }


  size_t RecordConcluder::ConcludeEnded(int64_t nowNs)
  {
    struct Candidate
    {
      uint32_t thread;
      InstanceTimeline* timeline;
      OpenRecordView view;
    };
    std::vector<Candidate> candidates;
    timelines_.ForEachOpenRecord([&](uint32_t thread, InstanceTimeline& timeline, const OpenRecordView& view) {
      if (nowNs - view.sinceNs >= kMinAgeNs && thread != 0)
      {
        candidates.push_back(Candidate{thread, &timeline, view});
      }
    });
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> seenBefore;
    seenBefore.swap(seenIdle_);  // what is not seen again at this pass is forgotten
    if (candidates.empty())
    {
      return 0;
    }

    std::map<uint32_t, ThreadActivity> activities;
    bool needsWaits = false;
    for (const Candidate& candidate : candidates)
    {
      const ThreadActivity activity = probes_.activity(candidate.thread);
      uint64_t address = 0;
      bool timed = false;
      needsWaits = needsWaits || activity.IsFutexWait(address, timed);
      activities[candidate.thread] = activity;
    }

    // The waits the threads of the process share: their pools'. Threads with a record open count
    // too (after a burst of refusals, every worker of the pool holds one), the record's own thread
    // apart (HasEnded wants two others).
    Waits idle;
    if (needsWaits && probes_.threads)
    {
      for (uint32_t thread : probes_.threads())
      {
        uint64_t address = 0;
        bool timed = false;
        const auto known = activities.find(thread);
        const ThreadActivity activity = known != activities.end() ? known->second : probes_.activity(thread);
        if (activity.IsFutexWait(address, timed))
        {
          idle[std::make_pair(address, timed)]++;
        }
      }
    }

    size_t concluded = 0;
    int64_t restInProgress = -2;  // not asked yet
    for (const Candidate& candidate : candidates)
    {
      const auto key = std::make_pair(candidate.thread, candidate.view.handle);
      const auto before = seenBefore.find(key);
      if (before != seenBefore.end())
      {
        seenIdle_.insert(*before);
      }
      if (!HasEnded(candidate.view, candidate.thread, activities[candidate.thread], nowNs, idle, restInProgress))
      {
        continue;
      }
      if (candidate.timeline->Conclude(candidate.view))
      {
        EndedRecord ended = candidate.view.ended;
        ended.concluded = true;
        ended.endedNs = nowNs;
        sink_.RecordEnded(ended);
        concluded++;
      }
      seenIdle_.erase(key);
    }
    concluded_ += concluded;
    return concluded;
  }


  std::vector<uint32_t> ProcessThreads()
  {
    std::vector<uint32_t> threads;
    DIR* directory = opendir("/proc/self/task");
    if (directory == nullptr)
    {
      return threads;
    }
    while (const dirent* entry = readdir(directory))
    {
      const unsigned long number = strtoul(entry->d_name, nullptr, 10);
      if (number != 0)
      {
        threads.push_back(static_cast<uint32_t>(number));
      }
    }
    closedir(directory);
    return threads;
  }
}
