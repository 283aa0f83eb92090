// Concludes the records that Orthanc's threads left open although their store has ended. Orthanc
// has no hook at the end of a failed store or of a request: a C-STORE that Orthanc refused (0xA700,
// 0xC000...) or could not write, an HTTP upload cut off or answered with an error, leaves its
// thread's record open until that thread serves another instance, which may be never. The thread
// itself tells when it has left the store, by what it does now (ThreadActivity):
//   - blocked on a socket of Orthanc's DICOM port: serving an association's next command, not a store
//     (a store never reads or writes the DICOM socket; the C-STORE answer is sent after it);
//   - blocked on a socket of the HTTP port: answering, or reading the next request; for an upload
//     still being read, only once the connection has sent data after it last received any;
//   - for a C-STORE or a job: in a timed futex wait that at least two other threads of the process
//     wait on too, at two passes a second apart: its pool's wait for work (Orthanc's DICOM workers
//     wait 100 ms at a time on their queue); for an upload not yet stored: in the wait its idle
//     fellows share (civetweb's queue). Inside a store, the waits are untimed (Orthanc's mutexes
//     and shared mutexes), and the filters and OnStored, where another plugin could wait on a timed
//     condition (Python's GIL), run one thread at a time under Orthanc's locks;
//   - for a REST API request past ReceivedInstance: Orthanc says no REST request is in progress.
// Anything else (running, writing a file, waiting for a lock, a database socket) is a store in
// progress, and stays open: so openRecords holds only stores still in progress, and its oldest age
// tells a hung store. Runs on the plugin's own thread, once a second while Orthanc ingests, for the
// records open longer than kMinAgeNs only: never on the ingest path.
#pragma once

#include "Correlation/ProcessSockets.h"
#include "Correlation/ThreadActivity.h"
#include "Timeline/ThreadTimelines.h"

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace IngestPerf
{
  // The kernel's ids of the threads of this process (/proc/self/task).
  std::vector<uint32_t> ProcessThreads();

  class RecordConcluder
  {
  public:
    static constexpr int64_t kMinAgeNs = 500 * 1000000LL;
    // Threads besides the record's own that must share its wait for it to be a pool's.
    static constexpr unsigned kIdlePeers = 2;

    struct Probes
    {
      std::function<ThreadActivity(uint32_t threadNumber)> activity;
      // The threads of the process (its /proc/self/task), for the waits they share.
      std::function<std::vector<uint32_t>()> threads;
      // Describes a descriptor if it is a socket of Orthanc's DICOM or HTTP port.
      std::function<bool(int fd, SocketInfo& socket)> socket;
      // REST API requests Orthanc has in progress besides the asker's own, -1 when it cannot say.
      std::function<int64_t()> restRequestsInProgress;
    };

    RecordConcluder(const ThreadTimelines& timelines, TimelineSink& sink, uint16_t dicomPort, uint16_t httpPort,
                    Probes probes);

    // One pass, from the plugin's thread only: concludes the records that have ended, and says
    // them to the sink. Returns how many.
    size_t ConcludeEnded(int64_t nowNs);

    uint64_t Concluded() const { return concluded_; }
    // Set by the entry point before the plugin's thread starts (Orthanc's own count).
    void SetRestRequestsInProgress(std::function<int64_t()> count)
    {
      probes_.restRequestsInProgress = std::move(count);
    }

  private:
    // The futex waits of the threads with no record open: (address, timed) -> how many threads.
    using Waits = std::map<std::pair<uint64_t, bool>, unsigned>;

    bool HasEnded(const OpenRecordView& view, uint32_t thread, const ThreadActivity& activity, int64_t nowNs,
                  const Waits& idle, int64_t& restInProgress);

    const ThreadTimelines& timelines_;
    TimelineSink& sink_;
    uint16_t dicomPort_;
    uint16_t httpPort_;
    Probes probes_;
    // Records seen in their pool's wait at the last pass: (thread, handle) -> the wait's address.
    std::map<std::pair<uint32_t, uint64_t>, uint64_t> seenIdle_;
    uint64_t concluded_ = 0;
  };
}
