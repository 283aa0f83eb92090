// Concludes the records that Orthanc's threads left open although their store has ended. Orthanc
// has no hook at the end of a failed store or of a request: a C-STORE that Orthanc refused or could
// not write, an HTTP upload cut off or answered with an error, leaves its thread's record open until
// that thread serves another instance or request (InstanceTimeline ends it then), which may be
// never. The plugin's thread concludes it earlier from what it sees of Orthanc's connections, by
// passive means only (its reading of Orthanc's own sockets, never another thread's state):
//   - an HTTP request's record: its connection (the client's address and port, or the address alone
//     when the port is not known) is no longer open; or, its port known, Orthanc has sent data on it
//     since it last received any (its answer), more than kContinueNs after the record started (a
//     "100 Continue" is sent at once);
//   - a C-STORE record: every DICOM connection that may have carried it (open when it started, and
//     not known to carry another calling AET) has closed;
//   - a store by one of Orthanc's jobs, a Lua script or a plugin's own thread has no connection to
//     watch: it is concluded at its thread's next instance only, and stays in openRecords until then.
// Anything else stays open: so openRecords holds stores in progress (and those whose end no
// connection shows), and its oldest age tells a hung store. Runs on the plugin's own thread, once
// a second while Orthanc ingests, for the records open longer than kMinAgeNs only.
#pragma once

#include "Correlation/DicomConnections.h"
#include "Correlation/ProcessSockets.h"
#include "Timeline/ThreadTimelines.h"

#include <cstdint>
#include <vector>

namespace IngestPerf
{
  class RecordConcluder
  {
  public:
    static constexpr int64_t kMinAgeNs = 500 * 1000000LL;
    static constexpr int64_t kContinueNs = 50 * 1000000LL;

    RecordConcluder(const ThreadTimelines& timelines, TimelineSink& sink, const DicomConnections& dicom);

    // One pass, from the plugin's thread only, with the HTTP port's connections it has just read:
    // concludes the records that have ended, and says them to the sink. Returns how many.
    size_t ConcludeEnded(int64_t nowNs, const std::vector<SocketInfo>& httpConnections);

  private:
    bool HasEnded(const OpenRecordView& view, int64_t nowNs, const std::vector<SocketInfo>& httpConnections) const;

    const ThreadTimelines& timelines_;
    TimelineSink& sink_;
    const DicomConnections& dicom_;
  };
}
