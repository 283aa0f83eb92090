#include "Recording/RecordConcluder.h"

#include "Platform/HttpConnectionIdentity.h"

namespace IngestPerf
{
  RecordConcluder::RecordConcluder(const ThreadTimelines& timelines, TimelineSink& sink,
                                   const DicomConnections& dicom) :
    timelines_(timelines),
    sink_(sink),
    dicom_(dicom)
  {
  }


  bool RecordConcluder::HasEnded(const OpenRecordView& view, int64_t nowNs,
                                 const std::vector<SocketInfo>& httpConnections) const
  {
    if (view.http.address != 0)
    {
      bool open = false;
      for (const SocketInfo& socket : httpConnections)
      {
        if (view.http.key != 0)
        {
          if (HttpConnectionIdentity::KeyOf(socket.peer, socket.peerPort) != view.http.key)
          {
            continue;
          }
          // Its answer went out: data sent after the last data received, and not at the very start.
          const int64_t ageMs = (nowNs - view.sinceNs) / 1000000;
          return socket.msSinceDataSent < socket.msSinceDataReceived &&
                 ageMs - socket.msSinceDataSent > kContinueNs / 1000000;
        }
        open = open || HttpConnectionIdentity::AddressKey(socket.peer) == view.http.address;
      }
      return !open;  // its connection (or every connection from its client) has closed
    }
    if (view.transport == Transport::Dicom)
    {
      return dicom_.AllClosedSince(view.sinceNs, view.ended.remoteAet);
    }
    return false;  // a job's, a script's or a plugin's store: no connection shows its end
  }


  size_t RecordConcluder::ConcludeEnded(int64_t nowNs, const std::vector<SocketInfo>& httpConnections)
  {
    size_t concluded = 0;
    timelines_.ForEachOpenRecord([&](uint32_t thread, InstanceTimeline& timeline, const OpenRecordView& view) {
      if (nowNs - view.sinceNs < kMinAgeNs || thread == 0 || !HasEnded(view, nowNs, httpConnections))
      {
        return;
      }
      if (timeline.Conclude(view))
      {
        EndedRecord ended = view.ended;
        ended.concluded = true;
        ended.endedNs = nowNs;
        sink_.RecordEnded(ended);
        concluded++;
      }
    });
    return concluded;
  }
}
