// The per-thread timeline of one instance being ingested. Orthanc runs every store step of an
// instance (ReceivedInstance, transcoding, filters, write, index, OnStored) synchronously on one
// thread, so a record opened on that thread and closed at OnStored correlates the events of one
// instance without any shared state. A record that never reaches OnStored (Orthanc refused the
// instance, its write or index failed, a filter discarded it, the client of an upload went away)
// ends in one of two ways, whichever comes first: the next event on the same thread closes it, or
// the plugin's own thread, having seen that this thread left the store (RecordConcluder), concludes
// it with Conclude(). Both go through one atomic word, so a record ends exactly once.
//
// Only the owning thread calls the event methods; other threads call Open() and Conclude().
// Nothing here allocates, locks or does I/O.
#pragma once

#include "Vocabulary/IngestVocabulary.h"
#include "Labels/InstanceLabels.h"
#include "Labels/RawLabels.h"
#include "Platform/ThreadClocks.h"

#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  // The thread's clocks (CPU time, run delay) at the bounds of one instance's phases, read for one
  // instance in PhasePartsSampling on each thread (sampled); unknown (HasCpu false) elsewhere.
  struct InstanceClocks
  {
    bool sampled = false;
    ThreadClockReading segmentStart;      // the instance's first event
    int64_t segmentStartNs = 0;           // when segmentStart was read (it is the start only if equal)
    ThreadClockReading received;          // ReceivedInstanceCallback
    ThreadClockReading filtered;          // the plugin's instance filter
    ThreadClockReading filtersPassed;     // its second instance filter, last in Orthanc's chain
    ThreadClockReading transcodeStart;    // TranscoderCallback
    ThreadClockReading transcodeEnd;      // end of a delegated transcode
    ThreadClockReading firstCreateStart;  // timed storage
    ThreadClockReading lastCreateEnd;
    ThreadClockReading ownStored;  // the plugin's OnStored, where a second one follows the other plugins'
    ThreadClockReading stored;     // OnStored: the end of Orthanc's OnStoredInstance callbacks
    // Timed storage: the clocks' advance inside the creates, summed (unknown if one was not read).
    int64_t createCpuNs = ThreadClockReading::kUnknown;
    int64_t createRunDelayNs = ThreadClockReading::kUnknown;
    // The thread's previous OnStored, the start of the gap before this instance (associationGap,
    // requestGap): its time (0: none) and, when read, its clocks.
    int64_t previousStoredNs = 0;
    ThreadClockReading previousStored;
  };

  // An instance that reached OnStored. Timestamps are monotonic nanoseconds; 0 means "not seen".
  struct CompletedInstance
  {
    Transport transport;
    bool hasTimeline;      // false: OnStored arrived without any earlier event on this thread
    bool hasReceivePhase;  // segmentStartNs marks an HTTP arrival or the previous instance of the request
    bool transcodeAttempted;
    int64_t segmentStartNs;      // first visible event of the instance
    int64_t receivedNs;          // ReceivedInstanceCallback
    int64_t filteredNs;          // the plugin's instance filter
    int64_t filtersPassedNs;     // its second instance filter, the last of Orthanc's chain (0: none)
    int64_t transcodeStartNs;    // TranscoderCallback
    int64_t transcodeEndNs;      // end of a delegated transcode (0: ends at the filter)
    int64_t firstCreateStartNs;  // timed storage: start of the first create of the instance
    int64_t lastCreateEndNs;     // timed storage: end of the last create
    int64_t createTotalNs;       // timed storage: time inside the creates
    bool removedAfterCreate;     // timed storage: the instance's file was removed before OnStored
    // First stored instance of an HTTP request: the answer this request will get. 0: not the
    // first (or not HTTP), 1: the client accepts gzip/deflate, 2: it does not.
    uint8_t httpAnswerEncoding;
    int64_t storedNs;  // OnStored: the end of Orthanc's OnStoredInstance callbacks as the plugin sees it
    // The plugin's first OnStored where its second one, last in Orthanc's chain, ended the instance
    // (storedNs): the OnStoredInstance callbacks of the plugins loaded after it ran in between. 0: none.
    int64_t ownStoredNs;
    int64_t startWallNs;  // wall clock (UTC epoch ns) at segmentStartNs
    uint64_t receivedBytes;
    uint64_t storedBytes;
    uint64_t instanceKey;     // hash of the Orthanc instance id
    int64_t receptionSecond;  // "ReceptionDate" metadata as UTC epoch seconds, -1 if unknown
    uint64_t peerKey;         // hash of the calling AET for C-STORE, 0 otherwise
    RawLabels labels;         // borrowed strings, valid while the sink handles the instance
    // Labels the hooks before OnStored already interned (instance filter, HTTP filter), kUnidentified
    // where not: they take precedence over the strings of `labels`.
    LabelId remoteAet;
    LabelId remoteIp;
    LabelId calledAet;
    // The plugin's thread had concluded this record as ended before OnStored came: a wrong
    // conclusion, counted as an error (the instance is counted stored all the same).
    bool concludedEarly;
    const char* instanceId;  // Orthanc's ID (borrowed like the labels), nullptr if unknown
    // HTTP: OnStored of the previous request on the same keep-alive connection -> this request's
    // filter, for the first instance of a request; -1 otherwise (another instance of the request, a
    // new connection, an unknown one, or another request in between).
    int64_t requestGapNs = -1;
    InstanceClocks clocks;

    // Where persist starts: the end of the instance filters, as far as the plugin sees it.
    int64_t FiltersEndNs() const { return filtersPassedNs != 0 ? filtersPassedNs : filteredNs; }
    // Where persist ends: the plugin's own OnStored.
    int64_t OwnStoredNs() const { return ownStoredNs != 0 ? ownStoredNs : storedNs; }

    // When the instance arrived, as far as the plugin sees it: ReceivedInstanceCallback where the
    // plugin holds it, else its instance filter (after Orthanc parsed, transcoded and summarised it,
    // and ran the ReceivedInstanceCallback of the plugin that holds it). 0: neither was seen.
    int64_t ArrivalNs() const { return receivedNs != 0 ? receivedNs : filteredNs; }
  };

  // The HTTP connection a request came on, as the filter knows it (Platform/HttpConnectionIdentity).
  struct HttpConnection
  {
    uint64_t key = 0;      // the client's address and port; 0 when not known
    uint64_t address = 0;  // the client's address alone; 0 when not an ingest request
  };

  // Where a hook is in an instance's timeline, for ClocksDue.
  enum class TimelineEvent
  {
    HttpRequest,  // an ingest request's filter
    Received,
    Transcode,
    StorageCreate,
    Filtered,       // IncomingDicomInstanceFilter
    FiltersPassed,  // the plugin's second instance filter, last in Orthanc's chain
    OwnStored,      // the plugin's OnStored, where its second one follows the other plugins'
    Stored
  };

  // How far an instance got before its record ended without OnStored.
  enum class RecordStage : uint8_t
  {
    None,          // nothing open
    Receiving,     // an HTTP ingest request whose body is being read: no instance yet
    Received,      // past ReceivedInstance, before the instance filters
    Filtered,      // past the instance filters: the write, the index, a C-STORE filter
    OtherFilters,  // past this plugin's instance filter, inside those of the plugins loaded after it
    OtherOnStored  // stored, inside the OnStoredInstance callbacks of the plugins loaded after this one
  };

  // What timed storage saw of the open instance.
  constexpr uint8_t kStorageCreated = 1;       // a create of its files succeeded
  constexpr uint8_t kStorageCreateFailed = 2;  // a create failed
  constexpr uint8_t kStorageRemoved = 4;       // a file created for it was removed again

  // A record that ended without OnStored, as the event that told it saw it.
  struct EndedRecord
  {
    Transport transport = Transport::Rest;
    RecordStage stage = RecordStage::None;
    bool hasPart10Header = true;
    bool concluded = false;  // by the plugin's thread (Conclude), not by the thread's next event
    uint8_t storage = 0;     // kStorage* flags
    int64_t sinceNs = 0;     // the record's start
    int64_t endedNs = 0;     // when it was known to be over
    LabelId remoteAet = kUnidentified;
    LabelId remoteIp = kUnidentified;
    LabelId calledAet = kUnidentified;
    // Ended at Received: the SOP Instance UID of its meta header ("" if none), for the plugin's
    // thread to look the instance up (Orthanc 1.13 answers a duplicate before any filter). Never shown.
    char sopInstanceUid[kMaxUidLength + 1] = {};
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
    virtual void RecordEnded(const EndedRecord& record) = 0;
  };

  // What another thread may read of a thread's open record: a copy of what its hooks published.
  struct OpenRecordView
  {
    uint64_t handle = 0;  // 0 when nothing is open; what Conclude() takes back
    int64_t sinceNs = 0;  // start of the open record
    RecordStage stage = RecordStage::None;
    Transport transport = Transport::Rest;
    // The HTTP request the record belongs to, if any (an upload, or a store inside an HTTP request:
    // POST /instances, STOW-RS): its connection, for the plugin's thread to see the request end.
    HttpConnection http;
    EndedRecord ended;  // what the record is if it has ended now (transport, stage, labels...)
  };

  class InstanceTimeline
  {
  public:
    InstanceTimeline();
    InstanceTimeline(const InstanceTimeline&) = delete;
    InstanceTimeline& operator=(const InstanceTimeline&) = delete;

    // Back to the state of a new thread, without reporting the open record.
    void Reset();

    // Whether the hook of `event` should read the thread's clocks and pass them to the event: for one
    // instance in `period` on this thread (0: never), at each bound of its phases, and at the OnStored
    // before it (the start of the gap before it). `ingestRoute`: for HttpRequest only.
    bool ClocksDue(TimelineEvent event, uint32_t period, bool ingestRoute = true) const;

    // acceptsCompression: the request's Accept-Encoding lists gzip or deflate (Orthanc's rule).
    // remoteIp: the client's address, interned, kept for the instances of a POST. connection: the TCP
    // connection the request came on (Platform/HttpConnectionIdentity).
    // clocks: read when ClocksDue said so, else unknown (as every `clocks` argument below).
    void HttpRequest(int64_t nowNs, bool isPost, bool isIngestRoute, Transport routeTransport, TimelineSink& sink,
                     bool acceptsCompression = false, LabelId remoteIp = kUnidentified,
                     HttpConnection connection = HttpConnection(),
                     const ThreadClockReading& clocks = ThreadClockReading());
    // receivedSyntax, sopClass, sopInstance: read from the meta header, nullptr if none.
    void Received(int64_t nowNs, Transport transport, uint64_t bytes, bool hasPart10Header, const char* receivedSyntax,
                  TimelineSink& sink, const char* sopClass = nullptr,
                  const ThreadClockReading& clocks = ThreadClockReading(), const char* sopInstance = nullptr);
    void TranscodeStarted(int64_t nowNs, const ThreadClockReading& clocks = ThreadClockReading());
    // Only when the plugin did the transcode itself.
    void TranscodeFinished(int64_t nowNs, const ThreadClockReading& clocks = ThreadClockReading());
    // Timed storage area, on the storing thread.
    void StorageCreated(int64_t startNs, int64_t endNs, const ThreadClockReading& startClocks = ThreadClockReading(),
                        const ThreadClockReading& endClocks = ThreadClockReading());
    void StorageCreateFailed();
    void StorageRemoved();
    // The labels a hook interned for the open record (the instance filter of a C-STORE instance: its
    // calling AET); kUnidentified leaves one as it is.
    void Identified(LabelId remoteAet, LabelId remoteIp, LabelId calledAet, uint64_t peerKey);
    // laterFilter: the plugin's second instance filter, last in Orthanc's chain, will follow
    // (FiltersPassed) unless a plugin loaded after this one refuses the instance.
    void Filtered(int64_t nowNs, Transport transport, TimelineSink& sink,
                  const ThreadClockReading& clocks = ThreadClockReading(), bool laterFilter = false);
    void FiltersPassed(int64_t nowNs, const ThreadClockReading& clocks = ThreadClockReading());
    // At the filter of an instance that no ReceivedInstance described: its bytes as Orthanc will store
    // them (after any ingest transcoding), from their meta header; syntax and sopClass nullptr if none.
    void Described(uint64_t bytes, bool hasPart10Header, const char* syntax, const char* sopClass);
    // The plugin's first OnStored where its second one, last in Orthanc's chain, will end the instance
    // (Stored): the OnStoredInstance callbacks of the plugins loaded after it run in between.
    void OwnStored(int64_t nowNs, const ThreadClockReading& clocks = ThreadClockReading());
    void Stored(const StoredEvent& event, TimelineSink& sink, const ThreadClockReading& clocks = ThreadClockReading());

    bool HasOpenInstance() const { return stage_ == Stage::Received || stage_ == Stage::Filtered; }
    Transport OpenTransport() const { return transport_; }

    // What the hooks before OnStored already know of the open instance, so that OnStored asks the
    // SDK only for the rest. Valid while the instance is open; nullptr where not known.
    bool OpenedByReceivedInstance() const { return HasOpenInstance() && receivedNs_ != 0; }
    // The bytes, syntax and SOP class below were read at the filter, after any transcoding: the
    // stored instance's.
    bool DescribedAtFilter() const { return HasOpenInstance() && describedAtFilter_; }
    bool TranscodeAttempted() const { return transcodeAttempted_; }
    uint64_t ReceivedBytes() const { return receivedBytes_; }
    const char* ReceivedSyntax() const { return receivedSyntax_[0] == '\0' ? nullptr : receivedSyntax_; }
    const char* ReceivedSopClass() const { return sopClass_[0] == '\0' ? nullptr : sopClass_; }
    // Inside an HTTP POST request (its client's address is known to the timeline).
    bool HttpRequestActive() const { return httpActive_; }
    // The calling AET of the open C-STORE instance, as its filter interned it; kUnidentified before.
    LabelId IdentifiedRemoteAet() const { return remoteAet_.load(std::memory_order_relaxed); }

    // Start of the open record (ns), or 0 when nothing is in flight on this thread.
    int64_t OpenSinceNs() const;
    // The open record as another thread sees it. A reader may see the record of one instance with
    // the stage of the next one; Conclude() refuses such a view.
    OpenRecordView Open() const;
    // One load: false when no record is open (Open() would return none); true may be a record
    // concluded already, which Open() sorts out.
    bool MayHaveOpenRecord() const { return handle_.load(std::memory_order_relaxed) != 0; }
    // Ends the record of `view` as ended, from another thread, if it is still the open one and not
    // concluded yet: then its thread's next event does not count it again. Returns whether it did.
    bool Conclude(const OpenRecordView& view);
    // How many records this thread has opened: moves with every instance and upload.
    uint64_t RecordsOpened() const { return recordsOpened_.load(std::memory_order_relaxed); }

  private:
    enum class Stage : uint8_t
    {
      Idle,
      HttpRequestOpen,  // an HTTP POST is being served, no instance open
      Received,
      Filtered
    };

    void AbandonOpenRecord(TimelineSink& sink, int64_t nowNs);
    Transport EffectiveTransport(Transport origin) const;
    // A new instance's segment: the next of the thread's instances, sampled when `clocks` were read.
    void OpenInstance(int64_t nowNs, Transport transport, const ThreadClockReading& clocks);
    // Whether the segment opened next is one of the sampled ones.
    bool NextSegmentSampled(uint32_t period) const;
    // The clocks of a segment that opens: `start` read at startNs, `now` read by this event (sampled
    // when read), and the thread's previous OnStored.
    void StartClocks(const ThreadClockReading& start, int64_t startNs, const ThreadClockReading& now);
    void ClearInstance();  // the fields of one instance, before the next one
    // The open instance's SOP Instance UID, written here only (nullptr: none), copied by Open().
    void StoreSopInstance(const char* uid);
    void LoadSopInstance(char* target) const;
    // What Open() returns, after each event: a new handle when a record opens (no record was open),
    // the same one with the new stage while it stays open; none after PublishClosed().
    void PublishOpen(int64_t sinceNs);
    void PublishClosed();
    // Takes the open record back from other threads when it ends here: false if it was concluded.
    bool CloseHandle();

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
    bool describedAtFilter_;
    int64_t segmentStartNs_;
    int64_t receivedNs_;
    int64_t filteredNs_;
    int64_t filtersPassedNs_;
    bool laterFilter_;     // a second instance filter of this plugin follows the other plugins'
    int64_t ownStoredNs_;  // this plugin's first OnStored, when a second one follows
    int64_t transcodeStartNs_;
    int64_t transcodeEndNs_;
    int64_t firstCreateStartNs_;
    int64_t lastCreateEndNs_;
    int64_t createTotalNs_;
    bool removedAfterCreate_;
    // The thread's instances so far (segments opened), which one is sampled (ClocksDue), and the open
    // instance's clocks.
    uint64_t segmentsOpened_;
    bool segmentCounted_;  // the open HTTP request's first segment is opened (counted) already
    InstanceClocks clocks_;
    // The thread's last OnStored and its clocks (when read), and the HTTP connection of its request:
    // the start of the gap before the next instance.
    int64_t lastStoredNs_;
    ThreadClockReading lastStoredClocks_;
    uint64_t lastStoredConnection_;  // 0: not an HTTP request, or its connection unknown
    uint64_t httpConnection_;        // the connection of the request being served (its key)
    int64_t requestGapNs_;           // of the request being served, until its first instance is stored
    uint64_t receivedBytes_;
    char receivedSyntax_[kMaxUidLength + 1];
    char sopClass_[kMaxUidLength + 1];
    uint64_t peerKey_;
    std::atomic<uint64_t> recordsOpened_;  // on this thread, since its slot was claimed (written here only)
    // What other threads read, written by this thread only (Conclude() sets one bit of handle_).
    // handle_: the record's number << 16 | the stage << 8 | the transport << 1 | concluded; 0: none.
    std::atomic<uint64_t> handle_;
    std::atomic<int64_t> openSinceNs_;
    std::atomic<uint8_t> published_;  // hasPart10Header
    // The HTTP request being served, for Open(): its connection's key and address (0: none).
    std::atomic<uint64_t> httpKey_;
    std::atomic<uint64_t> httpAddress_;
    std::atomic<LabelId> remoteAet_;
    std::atomic<LabelId> remoteIp_;
    std::atomic<LabelId> calledAet_;
    std::atomic<LabelId> httpRemoteIp_;  // the client of the HTTP request being served
    std::atomic<uint8_t> storage_;
    // The open instance's SOP Instance UID from ReceivedInstance, in words another thread may copy.
    static constexpr size_t kUidWords = (kMaxUidLength + 1 + 7) / 8;
    std::atomic<uint64_t> sopInstance_[kUidWords];
  };
}
