#include "Timeline/InstanceTimeline.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    constexpr uint64_t kConcludedBit = 1;
    constexpr uint8_t kPart10Bit = 1;

    // The handle's fields: the stage is a uint8_t (8 bits), the transport takes the 7 bits above the
    // concluded bit.
    static_assert(kTransportCount <= 0x80, "a transport fits in the 7 bits of a record's handle");

    uint64_t Handle(uint64_t number, RecordStage stage, Transport transport)
    {
      return (number << 16) | (static_cast<uint64_t>(stage) << 8) | (static_cast<uint64_t>(transport) << 1);
    }

    RecordStage StageOf(uint64_t handle)
    {
      return static_cast<RecordStage>((handle >> 8) & 0xff);
    }

    Transport TransportOf(uint64_t handle)
    {
      return static_cast<Transport>((handle >> 1) & 0x7f);
    }

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


  void InstanceTimeline::StoreSopInstance(const char* uid)
  {
    // Whole words, NUL-padded: a copy by another thread (Open) ends at the first NUL. Written while
    // no record of this thread at stage Received is published (Open copies them at that stage only):
    // the fence keeps these stores after the handle's change (a seqlock's write side).
    std::atomic_thread_fence(std::memory_order_release);
    char bytes[kUidWords * 8] = {};
    CopyBounded(bytes, uid, kMaxUidLength);
    for (size_t i = 0; i < kUidWords; i++)
    {
      uint64_t word;
      memcpy(&word, bytes + 8 * i, 8);
      sopInstance_[i].store(word, std::memory_order_relaxed);
    }
  }


  void InstanceTimeline::LoadSopInstance(char* target) const
  {
    char bytes[kUidWords * 8];
    for (size_t i = 0; i < kUidWords; i++)
    {
      const uint64_t word = sopInstance_[i].load(std::memory_order_relaxed);
      memcpy(bytes + 8 * i, &word, 8);
    }
    bytes[kMaxUidLength] = '\0';
    CopyBounded(target, bytes, kMaxUidLength);
  }


  InstanceTimeline::InstanceTimeline() :
    recordsOpened_(0),
    handle_(0),
    openSinceNs_(0),
    published_(0),
    httpKey_(0),
    httpAddress_(0),
    remoteAet_(kUnidentified),
    remoteIp_(kUnidentified),
    calledAet_(kUnidentified),
    httpRemoteIp_(kUnidentified),
    storage_(0)
  {
    StoreSopInstance(nullptr);
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
    segmentsOpened_ = 0;
    segmentCounted_ = false;
    clocks_ = InstanceClocks();
    lastStoredNs_ = 0;
    lastStoredClocks_ = ThreadClockReading();
    lastStoredConnection_ = 0;
    httpConnection_ = 0;
    requestGapNs_ = -1;
    ClearInstance();
    hasPart10Header_ = false;
    httpRemoteIp_.store(kUnidentified, std::memory_order_relaxed);
    httpKey_.store(0, std::memory_order_relaxed);
    httpAddress_.store(0, std::memory_order_relaxed);
    CloseHandle();
    PublishClosed();
  }


  void InstanceTimeline::ClearInstance()
  {
    transcodeAttempted_ = false;
    describedAtFilter_ = false;
    hasPart10Header_ = true;
    receivedSyntax_[0] = '\0';
    sopClass_[0] = '\0';
    receivedBytes_ = 0;
    receivedNs_ = 0;
    filteredNs_ = 0;
    filtersPassedNs_ = 0;
    laterFilter_ = false;
    ownStoredNs_ = 0;
    transcodeStartNs_ = 0;
    transcodeEndNs_ = 0;
    firstCreateStartNs_ = 0;
    lastCreateEndNs_ = 0;
    createTotalNs_ = 0;
    removedAfterCreate_ = false;
    peerKey_ = 0;
    remoteAet_.store(kUnidentified, std::memory_order_relaxed);
    calledAet_.store(kUnidentified, std::memory_order_relaxed);
    remoteIp_.store(httpActive_ ? httpRemoteIp_.load(std::memory_order_relaxed) : kUnidentified,
                    std::memory_order_relaxed);
    storage_.store(0, std::memory_order_relaxed);
  }


  Transport InstanceTimeline::EffectiveTransport(Transport origin) const
  {
    // A REST-origin store outside any HTTP request comes from one of Orthanc's jobs.
    return (origin == Transport::Rest && !httpActive_) ? Transport::Job : origin;
  }


  bool InstanceTimeline::CloseHandle()
  {
    const uint64_t previous = handle_.exchange(0, std::memory_order_acq_rel);
    openSinceNs_.store(0, std::memory_order_relaxed);
    return previous != 0 && (previous & kConcludedBit) == 0;
  }


  void InstanceTimeline::AbandonOpenRecord(TimelineSink& sink, int64_t nowNs)
  {
    const bool open = stage_ == Stage::Received || stage_ == Stage::Filtered ||
                      (stage_ == Stage::HttpRequestOpen && httpIngestRoute_ && httpInstances_ == 0);
    if (open)
    {
      // The view's copy of what this thread published, before the handle is taken back.
      OpenRecordView view = Open();
      if (CloseHandle() && view.handle != 0)
      {
        view.ended.endedNs = nowNs;
        sink.RecordEnded(view.ended);
      }
    }
    // Idle even inside an HTTP request: the next instance of that request has no known start,
    // so it gets no receive phase rather than one that includes the abandoned instance.
    stage_ = Stage::Idle;
    PublishClosed();
  }


  void InstanceTimeline::PublishClosed()
  {
    handle_.store(0, std::memory_order_release);
    openSinceNs_.store(0, std::memory_order_relaxed);
  }


  void InstanceTimeline::PublishOpen(int64_t sinceNs)
  {
    RecordStage stage = RecordStage::None;
    switch (stage_)
    {
      case Stage::HttpRequestOpen:
        stage = RecordStage::Receiving;
        break;
      case Stage::Received:
        stage = RecordStage::Received;
        break;
      case Stage::Filtered:
        stage = ownStoredNs_ != 0                         ? RecordStage::OtherOnStored
                : (laterFilter_ && filtersPassedNs_ == 0) ? RecordStage::OtherFilters
                                                          : RecordStage::Filtered;
        break;
      case Stage::Idle:
        break;
    }
    const Transport transport = stage == RecordStage::Receiving ? httpRouteTransport_ : transport_;
    published_.store(hasPart10Header_ ? kPart10Bit : 0, std::memory_order_relaxed);
    openSinceNs_.store(sinceNs, std::memory_order_relaxed);
    const uint64_t current = handle_.load(std::memory_order_relaxed);
    // A record concluded by another thread keeps its number and its concluded bit until it ends here.
    uint64_t number = current >> 16;
    if (current == 0)
    {
      number = recordsOpened_.load(std::memory_order_relaxed) + 1;
      recordsOpened_.store(number, std::memory_order_relaxed);
    }
    handle_.store(Handle(number, stage, transport) | (current & kConcludedBit), std::memory_order_release);
  }


  int64_t InstanceTimeline::OpenSinceNs() const
  {
    const uint64_t handle = handle_.load(std::memory_order_acquire);
    return (handle == 0 || (handle & kConcludedBit) != 0) ? 0 : openSinceNs_.load(std::memory_order_relaxed);
  }


  OpenRecordView InstanceTimeline::Open() const
  {
    OpenRecordView view;
    const uint64_t handle = handle_.load(std::memory_order_acquire);
    if (handle == 0 || (handle & kConcludedBit) != 0)
    {
      return view;
    }
    view.sinceNs = openSinceNs_.load(std::memory_order_relaxed);
    view.stage = StageOf(handle);
    view.transport = TransportOf(handle);
    const uint8_t published = published_.load(std::memory_order_relaxed);
    view.http.key = httpKey_.load(std::memory_order_relaxed);
    view.http.address = httpAddress_.load(std::memory_order_relaxed);
    EndedRecord& ended = view.ended;
    ended.transport = view.transport;
    ended.stage = view.stage;
    ended.hasPart10Header = (published & kPart10Bit) != 0;
    ended.storage = storage_.load(std::memory_order_relaxed);
    ended.sinceNs = view.sinceNs;
    ended.remoteAet = remoteAet_.load(std::memory_order_relaxed);
    ended.remoteIp = remoteIp_.load(std::memory_order_relaxed);
    ended.calledAet = calledAet_.load(std::memory_order_relaxed);
    if (view.stage == RecordStage::Received)
    {
      LoadSopInstance(ended.sopInstanceUid);
    }
    // Read again: if this thread moved to another record meanwhile, the copy may mix the two. The
    // fence keeps the loads above before this one (a seqlock's read side).
    std::atomic_thread_fence(std::memory_order_acquire);
    if (handle_.load(std::memory_order_relaxed) != handle)
    {
      return OpenRecordView();
    }
    view.handle = handle;
    return view;
  }


  bool InstanceTimeline::Conclude(const OpenRecordView& view)
  {
    uint64_t expected = view.handle;
    return expected != 0 &&
           handle_.compare_exchange_strong(expected, expected | kConcludedBit, std::memory_order_acq_rel);
  }


  bool InstanceTimeline::NextSegmentSampled(uint32_t period) const
  {
    // The thread's first instances, then one in `period`: a short run, or a few threads, give the
    // diagnosis the split instances it reads (kMinimumSplit) while the evidence is thin.
    constexpr uint64_t kFirstSampled = 5;
    return period != 0 && (segmentsOpened_ < kFirstSampled || segmentsOpened_ % period == 0);
  }


  bool InstanceTimeline::ClocksDue(TimelineEvent event, uint32_t period, bool ingestRoute) const
  {
    if (period == 0)
    {
      return false;
    }
    // Inside the segment that the request's filter opened: read when that one was.
    const bool insideRequest = stage_ == Stage::HttpRequestOpen && segmentCounted_;
    switch (event)
    {
      case TimelineEvent::HttpRequest:
        return ingestRoute && NextSegmentSampled(period);
      case TimelineEvent::Received:
        return insideRequest ? clocks_.sampled : NextSegmentSampled(period);
      case TimelineEvent::Filtered:
        return (HasOpenInstance() || insideRequest) ? clocks_.sampled : NextSegmentSampled(period);
      case TimelineEvent::Transcode:
        return stage_ == Stage::Received && clocks_.sampled;
      case TimelineEvent::StorageCreate:
      case TimelineEvent::FiltersPassed:
        return stage_ == Stage::Filtered && clocks_.sampled;
      case TimelineEvent::OwnStored:
        return HasOpenInstance() && clocks_.sampled;
      case TimelineEvent::Stored:
        // The end of a sampled instance, or the start of the gap before the next one, if it is sampled.
        return (HasOpenInstance() && clocks_.sampled) || NextSegmentSampled(period);
    }
    return false;
  }


  void InstanceTimeline::HttpRequest(int64_t nowNs, bool isPost, bool isIngestRoute, Transport routeTransport,
                                     TimelineSink& sink, bool acceptsCompression, LabelId remoteIp,
                                     HttpConnection connection, const ThreadClockReading& clocks)
  {
    AbandonOpenRecord(sink, nowNs);
    // The time since this thread's last OnStored, when that was the last request of this connection.
    const bool ingest = isPost && isIngestRoute;
    requestGapNs_ = (ingest && connection.key != 0 && connection.key == lastStoredConnection_ && nowNs >= lastStoredNs_)
                      ? nowNs - lastStoredNs_
                      : -1;
    // Any request ends the chain: the next one's gap would hold this one.
    lastStoredConnection_ = 0;
    httpConnection_ = ingest ? connection.key : 0;
    httpKey_.store(isPost ? connection.key : 0, std::memory_order_relaxed);
    httpAddress_.store(isPost ? connection.address : 0, std::memory_order_relaxed);
    httpActive_ = isPost;
    httpIngestRoute_ = isPost && isIngestRoute;
    httpRouteTransport_ = routeTransport;
    httpInstances_ = 0;
    httpAcceptsCompression_ = acceptsCompression;
    httpAnswerCounted_ = false;
    httpRemoteIp_.store(isPost ? remoteIp : kUnidentified, std::memory_order_relaxed);
    if (isPost)
    {
      stage_ = Stage::HttpRequestOpen;
      segmentStartNs_ = nowNs;
      hasReceivePhase_ = true;
      if (httpIngestRoute_)
      {
        ClearInstance();  // the labels of the request (its client) for the concluder
        // The segment of the request's first instance opens here, with the receive phase.
        segmentsOpened_++;
        segmentCounted_ = true;
        StartClocks(clocks, nowNs, clocks);
        PublishOpen(nowNs);
      }
    }
    else
    {
      stage_ = Stage::Idle;
    }
  }


  void InstanceTimeline::StartClocks(const ThreadClockReading& start, int64_t startNs, const ThreadClockReading& now)
  {
    clocks_ = InstanceClocks();
    clocks_.sampled = now.HasCpu();
    clocks_.segmentStart = start;
    clocks_.segmentStartNs = startNs;
    clocks_.createCpuNs = clocks_.sampled ? 0 : ThreadClockReading::kUnknown;
    clocks_.createRunDelayNs = clocks_.createCpuNs;
    clocks_.previousStoredNs = lastStoredNs_;
    clocks_.previousStored = lastStoredClocks_;
  }


  void InstanceTimeline::OpenInstance(int64_t nowNs, Transport transport, const ThreadClockReading& clocks)
  {
    if (stage_ == Stage::HttpRequestOpen && transport != Transport::Dicom)
    {
      // segmentStartNs_ is the HTTP arrival, or OnStored of the previous instance of this request
      hasReceivePhase_ = true;
      if (!segmentCounted_)
      {
        // The next instance of the request: its segment starts at the previous one's OnStored.
        segmentsOpened_++;
        StartClocks(lastStoredClocks_, lastStoredNs_, clocks);
      }
    }
    else
    {
      segmentStartNs_ = nowNs;
      hasReceivePhase_ = false;
      segmentsOpened_++;
      StartClocks(clocks, nowNs, clocks);
    }
    segmentCounted_ = false;
    if (httpActive_)
    {
      httpInstances_++;
    }
    transport_ = EffectiveTransport(transport);
    ClearInstance();
  }


  void InstanceTimeline::Received(int64_t nowNs, Transport transport, uint64_t bytes, bool hasPart10Header,
                                  const char* receivedSyntax, TimelineSink& sink, const char* sopClass,
                                  const ThreadClockReading& clocks, const char* sopInstance)
  {
    if (stage_ == Stage::Received || stage_ == Stage::Filtered)
    {
      AbandonOpenRecord(sink, nowNs);
    }
    OpenInstance(nowNs, transport, clocks);
    stage_ = Stage::Received;
    receivedNs_ = nowNs;
    clocks_.received = clocks;
    receivedBytes_ = bytes;
    hasPart10Header_ = hasPart10Header;
    CopyBounded(receivedSyntax_, receivedSyntax, kMaxUidLength);
    CopyBounded(sopClass_, sopClass, kMaxUidLength);
    StoreSopInstance(sopInstance);
    PublishOpen(segmentStartNs_);
  }


  void InstanceTimeline::TranscodeStarted(int64_t nowNs, const ThreadClockReading& clocks)
  {
    // Outside an ingest (retrieval, modification), or a second transcoder: not this record's start.
    if (stage_ == Stage::Received && transcodeStartNs_ == 0)
    {
      transcodeAttempted_ = true;
      transcodeStartNs_ = nowNs;
      clocks_.transcodeStart = clocks;
    }
  }


  void InstanceTimeline::TranscodeFinished(int64_t nowNs, const ThreadClockReading& clocks)
  {
    if (stage_ == Stage::Received && transcodeStartNs_ != 0)
    {
      transcodeEndNs_ = nowNs;
      clocks_.transcodeEnd = clocks;
    }
  }


  namespace
  {
    // Adds the advance of one clock between two readings to a sum, which stays unknown once one is.
    void AddAdvance(int64_t& sum, int64_t start, int64_t end)
    {
      sum = (sum == ThreadClockReading::kUnknown || start == ThreadClockReading::kUnknown ||
             end == ThreadClockReading::kUnknown)
              ? ThreadClockReading::kUnknown
              : sum + (end - start);
    }
  }


  void InstanceTimeline::StorageCreated(int64_t startNs, int64_t endNs, const ThreadClockReading& startClocks,
                                        const ThreadClockReading& endClocks)
  {
    // Creates outside a filtered instance are not ingest (old instances getting their
    // DicomUntilPixelData file, attachments added by REST): not part of any record.
    if (stage_ == Stage::Filtered)
    {
      if (firstCreateStartNs_ == 0)
      {
        firstCreateStartNs_ = startNs;
        clocks_.firstCreateStart = startClocks;
      }
      lastCreateEndNs_ = endNs;
      clocks_.lastCreateEnd = endClocks;
      AddAdvance(clocks_.createCpuNs, startClocks.cpuNs, endClocks.cpuNs);
      AddAdvance(clocks_.createRunDelayNs, startClocks.runDelayNs, endClocks.runDelayNs);
      createTotalNs_ += endNs - startNs;
      storage_.fetch_or(kStorageCreated, std::memory_order_relaxed);
    }
  }


  void InstanceTimeline::StorageCreateFailed()
  {
    if (stage_ == Stage::Filtered)
    {
      storage_.fetch_or(kStorageCreateFailed, std::memory_order_relaxed);
    }
  }


  void InstanceTimeline::StorageRemoved()
  {
    if (stage_ == Stage::Filtered && firstCreateStartNs_ != 0)
    {
      removedAfterCreate_ = true;  // Orthanc removes what it wrote when the index did not take it
      storage_.fetch_or(kStorageRemoved, std::memory_order_relaxed);
    }
  }


  void InstanceTimeline::Identified(LabelId remoteAet, LabelId remoteIp, LabelId calledAet, uint64_t peerKey)
  {
    if (stage_ != Stage::Received && stage_ != Stage::Filtered)
    {
      return;  // no instance open: nothing to name
    }
    if (remoteAet != kUnidentified)
    {
      remoteAet_.store(remoteAet, std::memory_order_relaxed);
      peerKey_ = peerKey;
    }
    if (remoteIp != kUnidentified)
    {
      remoteIp_.store(remoteIp, std::memory_order_relaxed);
    }
    if (calledAet != kUnidentified)
    {
      calledAet_.store(calledAet, std::memory_order_relaxed);
    }
  }


  void InstanceTimeline::Filtered(int64_t nowNs, Transport transport, TimelineSink& sink,
                                  const ThreadClockReading& clocks, bool laterFilter)
  {
    if (stage_ == Stage::Filtered)
    {
      // A second filter call without OnStored in between is a new instance (only possible when the
      // ReceivedInstanceCallback is not ours): close the previous one.
      AbandonOpenRecord(sink, nowNs);
    }
    if (stage_ == Stage::Idle || stage_ == Stage::HttpRequestOpen)
    {
      // No ReceivedInstanceCallback seen: the record starts here; preStore is not observable.
      OpenInstance(nowNs, transport, clocks);
    }
    stage_ = Stage::Filtered;
    filteredNs_ = nowNs;
    laterFilter_ = laterFilter;
    clocks_.filtered = clocks;
    PublishOpen(segmentStartNs_);
  }


  void InstanceTimeline::FiltersPassed(int64_t nowNs, const ThreadClockReading& clocks)
  {
    if (stage_ == Stage::Filtered && filtersPassedNs_ == 0 && ownStoredNs_ == 0)
    {
      filtersPassedNs_ = nowNs;
      clocks_.filtersPassed = clocks;
      PublishOpen(segmentStartNs_);
    }
  }


  void InstanceTimeline::OwnStored(int64_t nowNs, const ThreadClockReading& clocks)
  {
    if (HasOpenInstance())
    {
      ownStoredNs_ = nowNs;
      clocks_.ownStored = clocks;
      stage_ = Stage::Filtered;  // an instance stored without the filters (none seen) is past them all
      PublishOpen(segmentStartNs_);
    }
  }


  void InstanceTimeline::Described(uint64_t bytes, bool hasPart10Header, const char* syntax, const char* sopClass)
  {
    if (stage_ != Stage::Filtered || receivedNs_ != 0)
    {
      return;  // ReceivedInstance described it already, before any transcoding
    }
    describedAtFilter_ = true;
    receivedBytes_ = bytes;
    hasPart10Header_ = hasPart10Header;
    CopyBounded(receivedSyntax_, syntax, kMaxUidLength);
    CopyBounded(sopClass_, sopClass, kMaxUidLength);
  }


  void InstanceTimeline::Stored(const StoredEvent& event, TimelineSink& sink, const ThreadClockReading& clocks)
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
    instance.remoteAet = kUnidentified;
    instance.remoteIp = kUnidentified;
    instance.calledAet = kUnidentified;
    instance.requestGapNs = -1;
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
      instance.filtersPassedNs = filtersPassedNs_;
      instance.ownStoredNs = ownStoredNs_;
      instance.transcodeStartNs = transcodeStartNs_;
      instance.transcodeEndNs = transcodeEndNs_;
      instance.firstCreateStartNs = firstCreateStartNs_;
      instance.lastCreateEndNs = lastCreateEndNs_;
      instance.createTotalNs = createTotalNs_;
      instance.removedAfterCreate = removedAfterCreate_;
      instance.receivedBytes = receivedBytes_;
      instance.labels.receivedSyntax = ReceivedSyntax();
      instance.remoteAet = remoteAet_.load(std::memory_order_relaxed);
      instance.remoteIp = remoteIp_.load(std::memory_order_relaxed);
      instance.calledAet = calledAet_.load(std::memory_order_relaxed);
      if (instance.remoteAet != kUnidentified)
      {
        instance.peerKey = peerKey_;
      }
      instance.concludedEarly = !CloseHandle();
      instance.clocks = clocks_;
      if (clocks_.sampled)
      {
        instance.clocks.stored = clocks;
      }
      // The request's first instance carries the gap before the request.
      instance.requestGapNs = requestGapNs_;
      requestGapNs_ = -1;
    }
    else
    {
      instance.segmentStartNs = event.nowNs;
      instance.remoteIp = httpActive_ ? httpRemoteIp_.load(std::memory_order_relaxed) : kUnidentified;
    }
    instance.startWallNs = event.wallNowNs - (event.nowNs - instance.segmentStartNs);

    sink.InstanceCompleted(instance);

    lastStoredNs_ = event.nowNs;
    lastStoredClocks_ = clocks;
    lastStoredConnection_ = httpActive_ ? httpConnection_ : 0;
    segmentCounted_ = false;
    clocks_.sampled = false;
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
    PublishClosed();
  }
}
