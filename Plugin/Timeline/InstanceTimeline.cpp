#include "Timeline/InstanceTimeline.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    constexpr uint8_t kReceivingBit = 0x80;

    // target holds capacity + 1 characters; nullptr gives "".
    void CopyBounded(char* target, const char* source, size_t capacity)
    {
      size_t n = 0;
      if (source != nullptr)
      {
        while (n < capacity && source[n] != '\0')
        {
          n++;
        }
        memcpy(target, source, n);
      }
      target[n] = '\0';
    }
  }


  InstanceTimeline::InstanceTimeline() :
    openSinceNs_(0),
    openState_(0)
  {
    Reset();
  }


  void InstanceTimeline::Reset()
  {
    stage_ = Stage::Idle;
    transport_ = Transport::Rest;
    httpActive_ = false;
    httpIngestRoute_ = false;
    httpRouteTransport_ = Transport::Rest;
    httpInstances_ = 0;
    httpAcceptsCompression_ = false;
    httpAnswerCounted_ = false;
    hasReceivePhase_ = false;
    segmentStartNs_ = 0;
    ClearInstance();
    hasPart10Header_ = false;
    remoteIp_[0] = '\0';
    PublishOpen(0);
  }


  void InstanceTimeline::ClearInstance()
  {
    transcodeAttempted_ = false;
    hasPart10Header_ = true;
    receivedSyntax_[0] = '\0';
    sopClass_[0] = '\0';
    receivedBytes_ = 0;
    receivedNs_ = 0;
    filteredNs_ = 0;
    transcodeStartNs_ = 0;
    transcodeEndNs_ = 0;
    firstCreateStartNs_ = 0;
    lastCreateEndNs_ = 0;
    createTotalNs_ = 0;
    removedAfterCreate_ = false;
  }


  Transport InstanceTimeline::EffectiveTransport(Transport origin) const
  {
    // A REST-origin store outside any HTTP request comes from one of Orthanc's jobs.
    return (origin == Transport::Rest && !httpActive_) ? Transport::Job : origin;
  }


  void InstanceTimeline::AbandonOpenRecord(TimelineSink& sink)
  {
    switch (stage_)
    {
      case Stage::Received:
        sink.InstanceAbandoned(transport_, hasPart10Header_ ? Outcome::DiscardedBeforeFilter : Outcome::NotDicom,
                               ReceivedSyntax());
        break;
      case Stage::Filtered:
        sink.InstanceAbandoned(transport_, Outcome::DiscardedAfterFilter, ReceivedSyntax());
        break;
      case Stage::HttpRequestOpen:
        if (httpIngestRoute_ && httpInstances_ == 0)
        {
          sink.InstanceAbandoned(httpRouteTransport_, Outcome::RequestWithoutInstance, nullptr);
        }
        break;
      case Stage::Idle:
        break;
    }
    // Idle even inside an HTTP request: the next instance of that request has no known start,
    // so it gets no receive phase rather than one that includes the abandoned instance.
    stage_ = Stage::Idle;
    PublishOpen(0);
  }


  void InstanceTimeline::PublishOpen(int64_t sinceNs)
  {
    uint8_t ended = 0;
    // Inside a REST API request and past ReceivedInstance: Orthanc counts the request as in progress
    // until it answers, so a reader that sees no request in progress knows this record is over.
    if (sinceNs != 0 && httpActive_ && transport_ == Transport::Rest)
    {
      if (stage_ == Stage::Received)
      {
        ended = 1 + static_cast<uint8_t>(hasPart10Header_ ? Outcome::DiscardedBeforeFilter : Outcome::NotDicom);
      }
      else if (stage_ == Stage::Filtered)
      {
        ended = 1 + static_cast<uint8_t>(Outcome::DiscardedAfterFilter);
      }
    }
    const uint8_t receiving = (sinceNs != 0 && stage_ == Stage::HttpRequestOpen) ? kReceivingBit : 0;
    openState_.store(static_cast<uint8_t>(ended | receiving), std::memory_order_relaxed);
    openSinceNs_.store(sinceNs, std::memory_order_relaxed);
  }


  OpenRecordView InstanceTimeline::Open() const
  {
    const uint8_t state = openState_.load(std::memory_order_relaxed);
    const uint8_t ended = state & static_cast<uint8_t>(~kReceivingBit);
    OpenRecordView view;
    view.sinceNs = openSinceNs_.load(std::memory_order_relaxed);
    view.receiving = view.sinceNs != 0 && (state & kReceivingBit) != 0;
    view.endsWithRequest = view.sinceNs != 0 && ended != 0;
    view.outcomeIfRequestEnded = ended != 0 ? static_cast<Outcome>(ended - 1) : Outcome::Stored;
    return view;
  }


  void InstanceTimeline::HttpRequest(int64_t nowNs, bool isPost, bool isIngestRoute, Transport routeTransport,
                                     TimelineSink& sink, bool acceptsCompression, const char* remoteIp)
  {
    AbandonOpenRecord(sink);
    httpActive_ = isPost;
    httpIngestRoute_ = isPost && isIngestRoute;
    httpRouteTransport_ = routeTransport;
    httpInstances_ = 0;
    httpAcceptsCompression_ = acceptsCompression;
    httpAnswerCounted_ = false;
    CopyBounded(remoteIp_, isPost ? remoteIp : nullptr, kMaxAddressLength);
    if (isPost)
    {
      stage_ = Stage::HttpRequestOpen;
      segmentStartNs_ = nowNs;
      hasReceivePhase_ = true;
      if (httpIngestRoute_)
      {
        PublishOpen(nowNs);
      }
    }
    else
    {
      stage_ = Stage::Idle;
    }
  }


  void InstanceTimeline::OpenInstance(int64_t nowNs, Transport transport)
  {
    if (stage_ == Stage::HttpRequestOpen && transport != Transport::Dicom)
    {
      // segmentStartNs_ is the HTTP arrival, or OnStored of the previous instance of this request
      hasReceivePhase_ = true;
    }
    else
    {
      segmentStartNs_ = nowNs;
      hasReceivePhase_ = false;
    }
    if (httpActive_)
    {
      httpInstances_++;
    }
    transport_ = EffectiveTransport(transport);
    ClearInstance();
  }


  void InstanceTimeline::Received(int64_t nowNs, Transport transport, uint64_t bytes, bool hasPart10Header,
                                  const char* receivedSyntax, TimelineSink& sink, const char* sopClass)
  {
    if (stage_ == Stage::Received || stage_ == Stage::Filtered)
    {
      AbandonOpenRecord(sink);
    }
    OpenInstance(nowNs, transport);
    stage_ = Stage::Received;
    receivedNs_ = nowNs;
    receivedBytes_ = bytes;
    hasPart10Header_ = hasPart10Header;
    CopyBounded(receivedSyntax_, receivedSyntax, kMaxUidLength);
    CopyBounded(sopClass_, sopClass, kMaxUidLength);
    PublishOpen(segmentStartNs_);
  }


  void InstanceTimeline::TranscodeStarted(int64_t nowNs)
  {
    // Outside an ingest (retrieval, modification), or a second transcoder: not this record's start.
    if (stage_ == Stage::Received && transcodeStartNs_ == 0)
    {
      transcodeAttempted_ = true;
      transcodeStartNs_ = nowNs;
    }
  }


  void InstanceTimeline::TranscodeFinished(int64_t nowNs)
  {
    if (stage_ == Stage::Received && transcodeStartNs_ != 0)
    {
      transcodeEndNs_ = nowNs;
    }
  }


  void InstanceTimeline::StorageCreated(int64_t startNs, int64_t endNs)
  {
    // Creates outside a filtered instance are not ingest (old instances getting their
    // DicomUntilPixelData file, attachments added by REST): not part of any record.
    if (stage_ == Stage::Filtered)
    {
      if (firstCreateStartNs_ == 0)
      {
        firstCreateStartNs_ = startNs;
      }
      lastCreateEndNs_ = endNs;
      createTotalNs_ += endNs - startNs;
    }
  }


  void InstanceTimeline::StorageRemoved()
  {
    if (stage_ == Stage::Filtered && firstCreateStartNs_ != 0)
    {
      removedAfterCreate_ = true;  // Orthanc removes what it wrote when the index did not take it
    }
  }


  void InstanceTimeline::Filtered(int64_t nowNs, Transport transport, bool isCStoreFilter, TimelineSink& sink)
  {
    if (stage_ == Stage::Filtered && !isCStoreFilter)
    {
      // A second generic filter call without OnStored in between is a new instance (only possible
      // when the ReceivedInstanceCallback is not ours): close the previous one.
      AbandonOpenRecord(sink);
    }
    if (stage_ == Stage::Idle || stage_ == Stage::HttpRequestOpen)
    {
      // No ReceivedInstanceCallback seen: the record starts here; preStore is not observable.
      OpenInstance(nowNs, transport);
    }
    stage_ = Stage::Filtered;
    filteredNs_ = nowNs;  // the C-STORE filter runs after the generic one: keep the last
    PublishOpen(segmentStartNs_);
  }


  void InstanceTimeline::Stored(const StoredEvent& event, TimelineSink& sink)
  {
    CompletedInstance instance{};
    instance.transport = EffectiveTransport(event.transport);
    instance.storedNs = event.nowNs;
    instance.storedBytes = event.storedBytes;
    instance.instanceKey = event.instanceKey;
    instance.receptionSecond = event.receptionSecond;
    instance.peerKey = event.peerKey;
    instance.labels = event.labels;
    instance.instanceId = event.instanceId;
    if (httpActive_ && !httpAnswerCounted_)
    {
      instance.httpAnswerEncoding = httpAcceptsCompression_ ? 1 : 2;
      httpAnswerCounted_ = true;
    }

    const bool open = HasOpenInstance();
    instance.hasTimeline = open;
    if (open)
    {
      instance.hasReceivePhase = hasReceivePhase_;
      instance.transcodeAttempted = transcodeAttempted_;
      instance.segmentStartNs = segmentStartNs_;
      instance.receivedNs = receivedNs_;
      instance.filteredNs = filteredNs_;
      instance.transcodeStartNs = transcodeStartNs_;
      instance.transcodeEndNs = transcodeEndNs_;
      instance.firstCreateStartNs = firstCreateStartNs_;
      instance.lastCreateEndNs = lastCreateEndNs_;
      instance.createTotalNs = createTotalNs_;
      instance.removedAfterCreate = removedAfterCreate_;
      instance.receivedBytes = receivedBytes_;
      instance.labels.receivedSyntax = ReceivedSyntax();
    }
    else
    {
      instance.segmentStartNs = event.nowNs;
    }
    instance.startWallNs = event.wallNowNs - (event.nowNs - instance.segmentStartNs);

    sink.InstanceCompleted(instance);

    if (httpActive_)
    {
      // The next instance of the same request (ZIP, multipart) starts where this one ended.
      stage_ = Stage::HttpRequestOpen;
      segmentStartNs_ = event.nowNs;
    }
    else
    {
      stage_ = Stage::Idle;
    }
    PublishOpen(0);
  }
}
