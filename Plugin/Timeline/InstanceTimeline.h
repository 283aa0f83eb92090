// The per-thread timeline of one instance being ingested. Orthanc runs every store step of an
// instance (ReceivedInstance, transcoding, filters, write, index, OnStored) synchronously on one
// thread, so a record opened on that thread and closed at OnStored correlates the events of one
// instance without any shared state. Events that never reach OnStored leave the record open; it
// is closed with an outcome when the next event arrives on the same thread. Orthanc has no hook at
// the end of a request, so a REST request that Orthanc rejected after ReceivedInstance (a body it
// cannot parse, a store that failed) leaves its record open until that thread serves another
// request: Open() says which outcome it has if its request has ended, for a reader that can tell.
//
// Only the owning thread calls the event methods; other threads only read Open().
// Nothing here allocates, locks or does I/O.
#pragma once

#include "Vocabulary/IngestVocabulary.h"
#include "Labels/RawLabels.h"

#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  constexpr size_t kMaxAddressLength = 63;  // an IPv6 address in text, with room to spare

  // An instance that reached OnStored. Timestamps are monotonic nanoseconds; 0 means "not seen".
  struct CompletedInstance
  {
    Transport transport;
    bool hasTimeline;      // false: OnStored arrived without any earlier event on this thread
    bool hasReceivePhase;  // segmentStartNs marks an HTTP arrival or the previous instance of the request
    bool transcodeAttempted;
    int64_t segmentStartNs;      // first visible event of the instance
    int64_t receivedNs;          // ReceivedInstanceCallback
    int64_t filteredNs;          // last instance filter
    int64_t transcodeStartNs;    // TranscoderCallback
    int64_t transcodeEndNs;      // end of a delegated transcode (0: ends at the filter)
    int64_t firstCreateStartNs;  // timed storage: start of the first create of the instance
    int64_t lastCreateEndNs;     // timed storage: end of the last create
    int64_t createTotalNs;       // timed storage: time inside the creates
    bool removedAfterCreate;     // timed storage: the instance's file was removed before OnStored
    // First stored instance of an HTTP request: the answer this request will get. 0: not the
    // first (or not HTTP), 1: the client accepts gzip/deflate, 2: it does not.
    uint8_t httpAnswerEncoding;
    int64_t storedNs;     // OnStored
    int64_t startWallNs;  // wall clock (UTC epoch ns) at segmentStartNs
    uint64_t receivedBytes;
    uint64_t storedBytes;
    uint64_t instanceKey;     // hash of the Orthanc instance id
    int64_t receptionSecond;  // "ReceptionDate" metadata as UTC epoch seconds, -1 if unknown
    uint64_t peerKey;         // hash of the calling AET for C-STORE, 0 otherwise
    RawLabels labels;         // borrowed strings, valid while the sink handles the instance
    const char* instanceId;   // Orthanc's ID (borrowed like the labels), nullptr if unknown
  };

  struct StoredEvent
  {
    int64_t nowNs;
    int64_t wallNowNs;
    Transport transport;
    uint64_t storedBytes;
    uint64_t instanceKey;
    int64_t receptionSecond;
    uint64_t peerKey;        // hash of the calling AET for C-STORE, 0 otherwise
    RawLabels labels;        // receivedSyntax is filled by the timeline
    const char* instanceId;  // Orthanc's ID, borrowed during the callback; nullptr if unknown
  };

  class TimelineSink
  {
  public:
    virtual ~TimelineSink() = default;
    virtual void InstanceCompleted(const CompletedInstance& instance) = 0;
    // receivedSyntax: nullptr when unknown; valid during the call only.
    virtual void InstanceAbandoned(Transport transport, Outcome outcome, const char* receivedSyntax) = 0;
  };

  // What another thread may read of a thread's open record.
  struct OpenRecordView
  {
    int64_t sinceNs;                // start of the open record, 0 when nothing is in flight
    bool receiving;                 // an HTTP request without an instance yet: its body is uploading, or Orthanc
                                    // refused it before any instance (empty body, client gone mid-upload)
    bool endsWithRequest;           // the record belongs to a REST API request (POST /instances), past ReceivedInstance
    Outcome outcomeIfRequestEnded;  // its outcome when that request is over (meaningful with endsWithRequest)
  };

  class InstanceTimeline
  {
  public:
    InstanceTimeline();

    // Back to the state of a new thread, without reporting the open record.
    void Reset();

    // acceptsCompression: the request's Accept-Encoding lists gzip or deflate (Orthanc's rule).
    // remoteIp: the client's address, kept for the instances of a POST.
    void HttpRequest(int64_t nowNs, bool isPost, bool isIngestRoute, Transport routeTransport, TimelineSink& sink,
                     bool acceptsCompression = false, const char* remoteIp = nullptr);
    // receivedSyntax, sopClass: read from the meta header, nullptr if none.
    void Received(int64_t nowNs, Transport transport, uint64_t bytes, bool hasPart10Header, const char* receivedSyntax,
                  TimelineSink& sink, const char* sopClass = nullptr);
    void TranscodeStarted(int64_t nowNs);
    void TranscodeFinished(int64_t nowNs);  // only when the plugin did the transcode itself
    // Timed storage area, on the storing thread.
    void StorageCreated(int64_t startNs, int64_t endNs);
    void StorageRemoved();
    void Filtered(int64_t nowNs, Transport transport, bool isCStoreFilter, TimelineSink& sink);
    void Stored(const StoredEvent& event, TimelineSink& sink);

    bool HasOpenInstance() const { return stage_ == Stage::Received || stage_ == Stage::Filtered; }
    Transport OpenTransport() const { return transport_; }

    // What the hooks before OnStored already know of the open instance, so that OnStored asks the
    // SDK only for the rest. Valid while the instance is open; nullptr where not known.
    bool OpenedByReceivedInstance() const { return HasOpenInstance() && receivedNs_ != 0; }
    bool TranscodeAttempted() const { return transcodeAttempted_; }
    uint64_t ReceivedBytes() const { return receivedBytes_; }
    const char* ReceivedSyntax() const { return receivedSyntax_[0] == '\0' ? nullptr : receivedSyntax_; }
    const char* ReceivedSopClass() const { return sopClass_[0] == '\0' ? nullptr : sopClass_; }
    // The HTTP client of the request being served (POST only).
    const char* HttpRemoteIp() const { return httpActive_ && remoteIp_[0] != '\0' ? remoteIp_ : nullptr; }

    // Start of the open record (ns), or 0 when nothing is in flight on this thread.
    int64_t OpenSinceNs() const { return openSinceNs_.load(std::memory_order_relaxed); }
    // The open record as another thread sees it (two relaxed loads: a reader may pair the start of
    // one record with the state of the next; either is then shown as open).
    OpenRecordView Open() const;

  private:
    enum class Stage : uint8_t
    {
      Idle,
      HttpRequestOpen,  // an HTTP POST is being served, no instance open
      Received,
      Filtered
    };

    void AbandonOpenRecord(TimelineSink& sink);
    Transport EffectiveTransport(Transport origin) const;
    void OpenInstance(int64_t nowNs, Transport transport);
    void ClearInstance();               // the fields of one instance, before the next one
    void PublishOpen(int64_t sinceNs);  // what Open() returns, after each event

    Stage stage_;
    Transport transport_;
    bool httpActive_;
    bool httpIngestRoute_;
    Transport httpRouteTransport_;
    uint32_t httpInstances_;
    bool httpAcceptsCompression_;
    bool httpAnswerCounted_;
    bool hasReceivePhase_;
    bool hasPart10Header_;
    bool transcodeAttempted_;
    int64_t segmentStartNs_;
    int64_t receivedNs_;
    int64_t filteredNs_;
    int64_t transcodeStartNs_;
    int64_t transcodeEndNs_;
    int64_t firstCreateStartNs_;
    int64_t lastCreateEndNs_;
    int64_t createTotalNs_;
    bool removedAfterCreate_;
    uint64_t receivedBytes_;
    char receivedSyntax_[kMaxUidLength + 1];
    char sopClass_[kMaxUidLength + 1];
    char remoteIp_[kMaxAddressLength + 1];
    std::atomic<int64_t> openSinceNs_;
    // Bit 7: receiving. Bits 0-6: 0 when not ended by its request, otherwise 1 + the Outcome of the
    // record if its request ended.
    std::atomic<uint8_t> openState_;
  };
}
