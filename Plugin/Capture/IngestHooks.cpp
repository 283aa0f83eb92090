#include "Capture/IngestHooks.h"

#include "Capture/DicomMetaHeader.h"
#include "Correlation/ChangeCorrelator.h"
#include "Correlation/IngestWatcher.h"
#include "Platform/Hash.h"
#include "Platform/HttpConnectionIdentity.h"
#include "Platform/MonotonicClock.h"
#include "Platform/OrthancSdk.h"
#include "Recording/DuplicateDetection.h"
#include "Recording/IngestState.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    // The active ingest state: registered hooks run only once it is set.
    IngestState& Pipeline()
    {
      return *ActiveIngestState();
    }

    // Orthanc ingests: the plugin's thread wakes if it slept (a load and a fence, a write once per
    // idle period), and runs its tick when due (two loads, a write once per tick).
    void WakeWatcher(int64_t now)
    {
      if (IngestWatcher* watcher = ActiveIngestWatcher())
      {
        watcher->WakeIfSleeping();
        watcher->TickIfDue(now);
      }
    }

    // A reading of Orthanc's connections by the plugin's thread, soon (at most every 50 ms).
    void RequestReading(int64_t now)
    {
      if (IngestWatcher* watcher = ActiveIngestWatcher())
      {
        watcher->RequestReading(now);
      }
    }

    // Set once before registration, read-only afterwards.
    TranscodeTiming transcodeTiming = TranscodeTiming::FallThrough;
    bool needsReceptionDate = true;  // duplicate detection: not under OverwriteInstances
    bool ingestTranscoding = false;  // Orthanc may store another syntax than it received
    uint32_t partsPeriod = 0;        // IngestPerf.PhasePartsSampling (0: no phase is split)
    // The second instance filter and OnStored, last in Orthanc's chains (set before registration).
    LaterPluginsHooks* laterHooks = nullptr;

    Transport TransportOf(OrthancPluginInstanceOrigin origin)
    {
      switch (origin)
      {
        case OrthancPluginInstanceOrigin_DicomProtocol:
          return Transport::Dicom;
        case OrthancPluginInstanceOrigin_RestApi:
          return Transport::Rest;
        default:
          return Transport::Plugin;
      }
    }

    // An SDK call that answered its failure value: counted, and the label says "(unknown)" rather
    // than "(none)" (which means "not applicable"). Orthanc fails these calls only when it cannot
    // read its own instance; the test build with INGEST_PERF_FAULT_INJECTION fails them at random.
    const char* ExpectedLabel(const char* value)
    {
      if (value != nullptr)
      {
        return value;
      }
      Pipeline().stats.RecordSdkCallFailed();
      return kUnknownLabel;
    }

    Transport TransportFromSdk(const OrthancPluginDicomInstance* instance)
    {
      const OrthancPluginInstanceOrigin origin = OrthancSdk::InstanceOrigin(instance);
      if (origin == OrthancPluginInstanceOrigin_Unknown)
      {
        Pipeline().stats.RecordSdkCallFailed();  // counted under "plugin", TransportOf's default
      }
      return TransportOf(origin);
    }

    // Runs one callback's body with the entry timestamp, counts an exception instead of letting it
    // reach Orthanc, adds its wall time to the instance's time inside the plugin (PluginCost::AddInside),
    // and, for the sampled calls, records the thread CPU time spent inside as the plugin's own cost (a
    // preemption adds nothing). The body returns the thread CPU ns of work it ran on Orthanc's behalf (a
    // delegated transcode), which are not the plugin's cost.
    template <typename Body>
    void Guarded(Callback callback, Body body)
    {
      const bool sampled = PluginCost::SampleThisCall();
      const int64_t entryCpu = sampled ? ThreadCpuNowNs() : 0;
      const int64_t entry = MonotonicNowNs();
      int64_t notOurs = 0;
      try
      {
        notOurs = body(entry);
      }
      catch (...)
      {
        Pipeline().stats.RecordCallbackError();
      }
      if (sampled)
      {
        Pipeline().cost.Record(callback, ThreadCpuNowNs() - entryCpu - ThreadCpuClockShareNs() - notOurs);
      }
      if (callback != Callback::Change)  // the change thread stores nothing
      {
        Pipeline().cost.AddInside(MonotonicNowNs() - entry, callback == Callback::StoredInstance);
      }
    }

    int32_t OnHttpRequest(OrthancPluginHttpMethod method, const char* uri, const char* ip, uint32_t headersCount,
                          const char* const* headersKeys, const char* const* headersValues,
                          uint32_t /*getArgumentsCount*/, const char* const* /*getArgumentsKeys*/,
                          const char* const* /*getArgumentsValues*/)
    {
      Guarded(Callback::HttpRequestFilter, [&](int64_t now) -> int64_t {
        const bool hasBody = (method == OrthancPluginHttpMethod_Post || method == OrthancPluginHttpMethod_Put);
        bool isDicomWeb = false;
        const bool ingestRoute = hasBody && IsIngestRoute(uri, isDicomWeb);
        InstanceTimeline& timeline = Pipeline().timelines.ForCurrentThread();
        // Read first, as near `now` as can be: what follows is the request's, not the gap's.
        const ThreadClockReading clocks = ClocksIfDue(timeline, TimelineEvent::HttpRequest, ingestRoute);
        const bool compression = ingestRoute && AcceptsCompression(headersCount, headersKeys, headersValues);
        // The client's address, interned once per ingest request (its instances and, if it fails, the request).
        const LabelId address =
          ingestRoute ? Pipeline().labels.InternValue(LabelDimension::RemoteIp, ip) : kUnidentified;
        const uint64_t connection = ingestRoute ? HttpConnectionIdentity::Identify(ip) : 0;
        // Which connections may be the request's, for the plugin's thread to see it end.
        const uint64_t from = connection != 0 ? HttpConnectionIdentity::AddressOf(connection)
                              : ingestRoute   ? HttpConnectionIdentity::AddressKey(ip)
                                              : 0;
        timeline.HttpRequest(now, hasBody, ingestRoute, isDicomWeb ? Transport::Plugin : Transport::Rest,
                             Pipeline().recorder, compression, address, HttpConnection{connection, from}, clocks);
        if (ingestRoute)
        {
          WakeWatcher(now);
          if (HttpConnectionIdentity::CandidateWaiting())
          {
            RequestReading(now);  // once, at the first ingest request: while its connection is open
          }
        }
        return 0;
      });
      return 1;  // never refuse a request
    }

    OrthancPluginReceivedInstanceAction OnReceivedInstance(OrthancPluginMemoryBuffer64* /*modified*/,
                                                           const void* buffer, uint64_t size,
                                                           OrthancPluginInstanceOrigin origin)
    {
      Guarded(Callback::ReceivedInstance, [&](int64_t now) -> int64_t {
        InstanceTimeline& timeline = Pipeline().timelines.ForCurrentThread();
        const ThreadClockReading clocks = ClocksIfDue(timeline, TimelineEvent::Received);
        MetaHeader meta;
        ReadMetaHeader(meta, buffer, size);
        timeline.Received(now, TransportOf(origin), size, HasPart10Header(buffer, size),
                          meta.transferSyntax[0] != '\0' ? meta.transferSyntax : nullptr, Pipeline().recorder,
                          meta.sopClass[0] != '\0' ? meta.sopClass : nullptr, clocks,
                          meta.sopInstance[0] != '\0' ? meta.sopInstance : nullptr);
        WakeWatcher(now);
        return 0;
      });
      return OrthancPluginReceivedInstanceAction_KeepAsIs;
    }

    // Set while this thread's own delegated transcode runs, which re-enters the transcoder callbacks.
    thread_local bool insideDelegatedTranscode = false;

    // Delegate mode: do the transcode through the SDK (Orthanc's next transcoders, then DCMTK) and
    // time it exactly. Only for an ingest on this thread, with the one target syntax ingest asks for.
    // delegatedCpuNs: the thread CPU time of the SDK transcode (Orthanc's work, not the plugin's).
    bool DelegateTranscode(InstanceTimeline& timeline, OrthancPluginMemoryBuffer* transcoded, const void* buffer,
                           uint64_t size, const char* const* allowedSyntaxes, uint32_t countSyntaxes,
                           uint8_t allowNewSopInstanceUid, int64_t& delegatedCpuNs)
    {
      if (transcodeTiming != TranscodeTiming::Delegate || !timeline.HasOpenInstance() || countSyntaxes != 1 ||
          allowNewSopInstanceUid == 0 || size > UINT32_MAX)
      {
        return false;
      }
      const int64_t startCpu = ThreadCpuNowNs();
      insideDelegatedTranscode = true;
      const OrthancSdk::DicomInstance result =
        OrthancSdk::Transcode(buffer, static_cast<uint32_t>(size), allowedSyntaxes[0]);
      insideDelegatedTranscode = false;
      delegatedCpuNs = ThreadCpuNowNs() - startCpu;
      const int64_t end = MonotonicNowNs();
      if (result == nullptr)
      {
        return false;  // Orthanc's own attempt after ours will fail the same way, and report it
      }
      const ThreadClockReading clocks = ClocksIfDue(timeline, TimelineEvent::Transcode);
      const bool serialized = OrthancSdk::Serialize(transcoded, result);
      if (serialized)
      {
        timeline.TranscodeFinished(end, clocks);
      }
      return serialized;
    }

    OrthancPluginErrorCode OnTranscode(OrthancPluginMemoryBuffer* transcoded, const void* buffer, uint64_t size,
                                       const char* const* allowedSyntaxes, uint32_t countSyntaxes,
                                       uint8_t allowNewSopInstanceUid)
    {
      if (insideDelegatedTranscode)
      {
        return OrthancPluginErrorCode_NotImplemented;  // our own delegated call: let the others work
      }
      bool done = false;
      Guarded(Callback::Transcoder, [&](int64_t now) -> int64_t {
        InstanceTimeline& timeline = Pipeline().timelines.ForCurrentThread();
        timeline.TranscodeStarted(now, ClocksIfDue(timeline, TimelineEvent::Transcode));
        int64_t delegatedCpuNs = 0;
        done = DelegateTranscode(timeline, transcoded, buffer, size, allowedSyntaxes, countSyntaxes,
                                 allowNewSopInstanceUid, delegatedCpuNs);
        return delegatedCpuNs;
      });
      // FallThrough (or a failed delegation): an error makes Orthanc go on to the next transcoder,
      // then DCMTK, exactly as without this plugin.
      return done ? OrthancPluginErrorCode_Success : OrthancPluginErrorCode_NotImplemented;
    }

    // What ReceivedInstance reads of an instance when the plugin holds it, read here otherwise: its
    // bytes as Orthanc will store them (a pointer and a size, no copy), so that OnStored asks the SDK
    // for less.
    void DescribeAtFilter(InstanceTimeline& timeline, const OrthancPluginDicomInstance* instance)
    {
      uint64_t size = 0;
      const void* data = OrthancSdk::InstanceData(instance);
      if (data == nullptr || !OrthancSdk::InstanceSize(instance, size))
      {
        Pipeline().stats.RecordSdkCallFailed();
        return;  // OnStored asks for each item instead
      }
      MetaHeader meta;
      ReadMetaHeader(meta, data, size);
      timeline.Described(size, HasPart10Header(data, size),
                         meta.transferSyntax[0] != '\0' ? meta.transferSyntax : nullptr,
                         meta.sopClass[0] != '\0' ? meta.sopClass : nullptr);
    }

    // Who sent a C-STORE instance, read at the instance filter rather than at OnStored (the same SDK
    // call, once) so that a store that fails after the filters still says which modality it came
    // from. Its address and called AET are metadata, which Orthanc attaches only when it indexes the
    // instance: read at OnStored.
    void IdentifyCStore(InstanceTimeline& timeline, const OrthancPluginDicomInstance* instance)
    {
      const char* aet = ExpectedLabel(OrthancSdk::InstanceRemoteAet(instance));
      timeline.Identified(Pipeline().labels.InternValue(LabelDimension::RemoteAet, aet), kUnidentified, kUnidentified,
                          HashKey(aet));
    }

    int32_t OnLaterInstanceFilter(const OrthancPluginDicomInstance* instance);
    OrthancPluginErrorCode OnLaterStoredInstance(const OrthancPluginDicomInstance* instance, const char* instanceId);

    // Registers the second callback of a chain from inside the first one, at the first instance: Orthanc
    // holds the mutex under which it walks that chain (invokeServiceMutex_ for the instance filters,
    // storedCallbackMutex_ for OnStored, 1.10.1 to 1.13.0), so no other thread walks the list while the
    // callback is appended; Orthanc calls it last, for this instance already. Every plugin has loaded
    // by then (Orthanc starts its servers after loading them). Returns whether it is registered.
    template <typename Register>
    bool LaterHookRegistered(LaterPluginsHooks::State (LaterPluginsHooks::*get)() const,
                             void (LaterPluginsHooks::*set)(LaterPluginsHooks::State), Register doRegister)
    {
      if (laterHooks == nullptr)
      {
        return false;
      }
      LaterPluginsHooks::State state = (laterHooks->*get)();
      if (state == LaterPluginsHooks::State::Waiting)
      {
        state = doRegister() ? LaterPluginsHooks::State::Registered : LaterPluginsHooks::State::Refused;
        (laterHooks->*set)(state);
      }
      return state == LaterPluginsHooks::State::Registered;
    }

    // The instance filter always answers 1: Orthanc goes on to the filters registered after it (a
    // C-STORE filter answering 1 would stop Orthanc's loop there, which is why the plugin has none).
    int32_t OnInstanceFilter(const OrthancPluginDicomInstance* instance)
    {
      Guarded(Callback::InstanceFilter, [&](int64_t now) -> int64_t {
        InstanceTimeline& timeline = Pipeline().timelines.ForCurrentThread();
        const ThreadClockReading clocks = ClocksIfDue(timeline, TimelineEvent::Filtered);
        // The origin is one more SDK call: only paid when no ReceivedInstance opened the record.
        const Transport transport = timeline.HasOpenInstance() ? timeline.OpenTransport() : TransportFromSdk(instance);
        const bool later = LaterHookRegistered(&LaterPluginsHooks::Filter, &LaterPluginsHooks::SetFilter, [] {
          return OrthancSdk::RegisterInstanceFilter(OnLaterInstanceFilter) == OrthancPluginErrorCode_Success;
        });
        timeline.Filtered(now, transport, Pipeline().recorder, clocks, later);
        if (!timeline.OpenedByReceivedInstance())
        {
          DescribeAtFilter(timeline, instance);
        }
        if (transport == Transport::Dicom)
        {
          IdentifyCStore(timeline, instance);
          // While Orthanc stores it, the plugin's thread sees whether an association closed (this
          // instance may be the first of the next one) and reads the new one before OnStored.
          if (IngestWatcher* watcher = ActiveIngestWatcher())
          {
            watcher->RequestCheck();
          }
        }
        WakeWatcher(now);
        return 0;
      });
      return 1;
    }

    // What OnStored reports of an instance. The hooks before it already read the origin, size,
    // transfer syntax and SOP class (ReceivedInstance) and the client address (HTTP filter): the SDK
    // is asked only for what they could not see, each call costing microseconds inside Orthanc's
    // store. The stored instance is the received one unless a transcoder may have run.
    StoredEvent DescribeStored(int64_t now, const InstanceTimeline& timeline,
                               const OrthancPluginDicomInstance* instance, const char* instanceId)
    {
      StoredEvent event{};
      event.nowNs = now;
      event.wallNowNs = WallNowNs();
      event.instanceKey = HashKey(instanceId);
      event.instanceId = instanceId;
      const bool received = timeline.OpenedByReceivedInstance() || timeline.DescribedAtFilter();
      // Read at the filter, the bytes are the stored ones; read at ReceivedInstance, unless transcoded.
      const bool unchanged =
        timeline.DescribedAtFilter() || (received && !ingestTranscoding && !timeline.TranscodeAttempted());
      // An open record already holds the origin, read by ReceivedInstance or by the filter.
      event.transport = timeline.HasOpenInstance() ? timeline.OpenTransport() : TransportFromSdk(instance);
      // The metadata strings belong to the instance: borrowed for the duration of this callback.
      event.storedBytes = timeline.ReceivedBytes();
      if (!unchanged && !OrthancSdk::InstanceSize(instance, event.storedBytes))
      {
        // Not the SDK's -1 read as 18 EB: the received size when known, else 0 (a size class of its own).
        Pipeline().stats.RecordSdkCallFailed();
        event.storedBytes = received ? timeline.ReceivedBytes() : 0;
      }
      event.labels.storedSyntax = (unchanged && timeline.ReceivedSyntax() != nullptr)
                                    ? timeline.ReceivedSyntax()
                                    : ExpectedLabel(OrthancSdk::InstanceMetadata(instance, "TransferSyntax"));
      event.labels.sopClass = (received && timeline.ReceivedSopClass() != nullptr)
                                ? timeline.ReceivedSopClass()
                                : ExpectedLabel(OrthancSdk::InstanceMetadata(instance, "SopClassUid"));
      event.receptionSecond = -1;
      if (needsReceptionDate)
      {
        // Without it, duplicate detection has one piece of evidence less (DuplicateDetection).
        ParseReceptionDate(event.receptionSecond,
                           ExpectedLabel(OrthancSdk::InstanceMetadata(instance, "ReceptionDate")));
      }
      if (event.transport == Transport::Dicom)
      {
        if (!timeline.HasOpenInstance() || timeline.IdentifiedRemoteAet() == kUnidentified)
        {
          // Not identified by the C-STORE filter (the timeline passes that AET on otherwise). A
          // failed AET read is one peer "(unknown)" for associationGap, as for the label.
          const char* aet = ExpectedLabel(OrthancSdk::InstanceRemoteAet(instance));
          event.peerKey = HashKey(aet);
          event.labels.remoteAet = aet;
        }
        event.labels.calledAet = ExpectedLabel(OrthancSdk::InstanceMetadata(instance, "CalledAET"));
      }
      if (event.transport == Transport::Rest && timeline.HttpRequestActive())
      {
        return event;  // the HTTP filter interned the client's address (the timeline passes it on)
      }
      // Instances from other plugins (STOW-RS, Orthanc peers' jobs) may have no client address.
      const char* ip = OrthancSdk::InstanceMetadata(instance, "RemoteIP");
      event.labels.remoteIp = (event.transport == Transport::Plugin) ? ip : ExpectedLabel(ip);
      return event;
    }

    // The second instance filter, last in Orthanc's chain: the other plugins' filters are over.
    int32_t OnLaterInstanceFilter(const OrthancPluginDicomInstance* /*instance*/)
    {
      Guarded(Callback::InstanceFilter, [&](int64_t now) -> int64_t {
        InstanceTimeline& timeline = Pipeline().timelines.ForCurrentThread();
        timeline.FiltersPassed(now, ClocksIfDue(timeline, TimelineEvent::FiltersPassed));
        return 0;
      });
      return 1;
    }

    void StoredHere(int64_t now, const OrthancPluginDicomInstance* instance, const char* instanceId)
    {
      InstanceTimeline& timeline = Pipeline().timelines.ForCurrentThread();
      // Read first: DescribeStored's SDK calls belong to the gap after this instance, not to it.
      const ThreadClockReading clocks = ClocksIfDue(timeline, TimelineEvent::Stored);
      timeline.Stored(DescribeStored(now, timeline, instance, instanceId), Pipeline().recorder, clocks);
    }

    // The instance ends here, unless a second OnStored of this plugin follows the other plugins'.
    OrthancPluginErrorCode OnStoredInstance(const OrthancPluginDicomInstance* instance, const char* instanceId)
    {
      Guarded(Callback::StoredInstance, [&](int64_t now) -> int64_t {
        const bool later = LaterHookRegistered(&LaterPluginsHooks::Stored, &LaterPluginsHooks::SetStored, [] {
          OrthancSdk::RegisterOnStored(OnLaterStoredInstance);  // Orthanc answers no error for this one
          return true;
        });
        if (later)
        {
          InstanceTimeline& timeline = Pipeline().timelines.ForCurrentThread();
          timeline.OwnStored(now, ClocksIfDue(timeline, TimelineEvent::OwnStored));
        }
        else
        {
          StoredHere(now, instance, instanceId);
        }
        return 0;
      });
      return OrthancPluginErrorCode_Success;
    }

    // The second OnStored, last in Orthanc's chain: the other plugins' callbacks are over.
    OrthancPluginErrorCode OnLaterStoredInstance(const OrthancPluginDicomInstance* instance, const char* instanceId)
    {
      Guarded(Callback::StoredInstance, [&](int64_t now) -> int64_t {
        StoredHere(now, instance, instanceId);
        return 0;
      });
      return OrthancPluginErrorCode_Success;
    }

    OrthancPluginErrorCode OnChange(OrthancPluginChangeType changeType, OrthancPluginResourceType resourceType,
                                    const char* resourceId)
    {
      Guarded(Callback::Change, [&](int64_t now) -> int64_t {
        int64_t pairedStoredNs = 0;
        if (resourceId != nullptr && changeType == OrthancPluginChangeType_NewInstance)
        {
          pairedStoredNs = Pipeline().recorder.NewInstanceChange(HashKey(resourceId), now);
        }
        else if (resourceId != nullptr && changeType == OrthancPluginChangeType_Deleted &&
                 resourceType == OrthancPluginResourceType_Instance)
        {
          Pipeline().recorder.InstanceDeleted(HashKey(resourceId));
        }
        Pipeline().changes.ChangeDelivered(static_cast<uint32_t>(changeType), now, pairedStoredNs);
        if (changeType == OrthancPluginChangeType_OrthancStarted)
        {
          if (IngestWatcher* watcher = ActiveIngestWatcher())
          {
            watcher->OrthancStarted();  // every plugin has loaded: its thread takes the hooks asked for
          }
        }
        return 0;
      });
      return OrthancPluginErrorCode_Success;
    }

    HookState Registered(OrthancPluginErrorCode code, const char* what)
    {
      HookState state;
      state.registered = (code == OrthancPluginErrorCode_Success);
      if (!state.registered)
      {
        state.reason =
          std::string("Orthanc refused the registration of ") + what + ": " + OrthancSdk::ErrorDescription(code);
      }
      return state;
    }

    HookState RegisteredVoid()
    {
      HookState state;
      state.registered = true;
      return state;
    }
  }


  ThreadClockReading ClocksIfDue(InstanceTimeline& timeline, TimelineEvent event, bool ingestRoute)
  {
    ThreadClockReading reading;
    if (timeline.ClocksDue(event, partsPeriod, ingestRoute))
    {
      ReadThreadClocks(reading);
    }
    return reading;
  }


  bool HasPart10Header(const void* buffer, uint64_t size)
  {
    return buffer != nullptr && size >= 132 && memcmp(static_cast<const char*>(buffer) + 128, "DICM", 4) == 0;
  }


  bool AcceptsCompression(uint32_t headersCount, const char* const* keys, const char* const* values)
  {
    for (uint32_t i = 0; i < headersCount; i++)
    {
      if (keys[i] == nullptr || values[i] == nullptr || strcmp(keys[i], "accept-encoding") != 0)
      {
        continue;
      }
      const char* token = values[i];
      while (*token != '\0')
      {
        while (*token == ' ' || *token == '\t' || *token == ',')
        {
          token++;
        }
        const char* end = token;
        while (*end != '\0' && *end != ',')
        {
          end++;
        }
        const char* last = end;
        while (last > token && (last[-1] == ' ' || last[-1] == '\t'))
        {
          last--;
        }
        const size_t length = static_cast<size_t>(last - token);
        if ((length == 4 && strncmp(token, "gzip", 4) == 0) || (length == 7 && strncmp(token, "deflate", 7) == 0))
        {
          return true;
        }
        token = end;
      }
    }
    return false;
  }


  bool IsIngestRoute(const char* uri, bool& isDicomWeb)
  {
    isDicomWeb = false;
    if (uri == nullptr)
    {
      return false;
    }
    if (strcmp(uri, "/instances") == 0 || strcmp(uri, "/instances/") == 0)
    {
      return true;
    }
    // STOW-RS: POST {root}/studies or {root}/studies/{StudyInstanceUID}
    const char* studies = strstr(uri, "/studies");
    if (studies != nullptr && (studies[8] == '\0' || (studies[8] == '/' && strchr(studies + 9, '/') == nullptr)))
    {
      isDicomWeb = true;
      return true;
    }
    return false;
  }


  const char* const kTranscoderOffReason =
    "IngestPerf.TranscodeTiming is Off (the default): a registered transcoder makes Orthanc, when it cannot decode "
    "a frame, also try transcoding it to Little Endian Explicit (ServerContext::DecodeDicomFrame), which changes "
    "its answer; the transcoding is inside preStore. Set TranscodeTiming to FallThrough to time it, accepting that";


  const char* const kCStoreFilterReason =
    "never registered: Orthanc stops at the first C-STORE filter that accepts an instance, so a filter of this "
    "plugin would keep the C-STORE filters of plugins loaded after it from running (instances they refuse would "
    "be stored); the calling AET is read at the instance filter instead";


  HookRegistrations RegisterIngestHooks(const Configuration& configuration, LaterPluginsHooks& later)
  {
    laterHooks = &later;
    transcodeTiming = configuration.transcodeTiming;
    needsReceptionDate = !configuration.overwriteInstances;
    ingestTranscoding = configuration.ingestTranscoding;
    partsPeriod = configuration.phasePartsSampling;
    HttpConnectionIdentity::Configure(static_cast<uint16_t>(configuration.httpPort), configuration.httpKeepAlive,
                                      configuration.httpConnectionIdentity);

    HookRegistrations result;

    result.httpRequestFilter = Registered(OrthancSdk::RegisterHttpFilter(OnHttpRequest), "the HTTP request filter");

    // The ReceivedInstanceCallback is the entry point's to decide (Host/LoadedPlugins), and taken only
    // once every plugin has loaded (RegisterLateHooks).

    if (configuration.ingestTranscoding && configuration.transcodeTiming != TranscodeTiming::Off)
    {
      result.transcoder = Registered(OrthancSdk::RegisterTranscoder(OnTranscode), "the transcoder callback");
    }
    else
    {
      result.transcoder.reason = configuration.ingestTranscoding
                                   ? kTranscoderOffReason
                                   : "IngestTranscoding is not configured: no transcoding on ingest";
    }

    result.instanceFilter =
      Registered(OrthancSdk::RegisterInstanceFilter(OnInstanceFilter), "the incoming DICOM instance filter");
    result.cstoreFilter.reason = kCStoreFilterReason;

    OrthancSdk::RegisterOnStored(OnStoredInstance);
    result.storedInstance = RegisteredVoid();
    OrthancSdk::RegisterOnChange(OnChange);
    result.change = RegisteredVoid();
    return result;
  }


  void RegisterLateHooks(ReceivedInstanceHook& receivedInstance)
  {
    if (receivedInstance.Get() != ReceivedInstanceHook::State::Waiting)
    {
      return;
    }
    // Orthanc registers it, and calls it, under the same mutex (invokeServiceMutex_, 1.10.0 to 1.13.0):
    // registering while instances arrive is safe. Refused when another plugin holds it (Orthanc
    // logs its refusal); that plugin keeps it.
    const bool held = OrthancSdk::RegisterReceivedInstance(OnReceivedInstance) == OrthancPluginErrorCode_Success;
    receivedInstance.Set(held ? ReceivedInstanceHook::State::Held : ReceivedInstanceHook::State::Refused);
  }
}
