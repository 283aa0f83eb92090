// The only place that talks to the Orthanc plugin C SDK: registrations, what the hot path asks of
// an instance (inline, no cost over the C call), RAII for what the SDK allocates, logging, the
// configuration, answering REST calls, and turning C++ exceptions into an OrthancPluginErrorCode.
// The callbacks themselves are the SDK's C signatures, defined where they are registered.
#pragma once

#include <orthanc/OrthancCPlugin.h>

#include <json/value.h>

#include "Platform/FaultInjection.h"
#include "Platform/MappedText.h"

#include <memory>
#include <new>
#include <string>
#include <vector>

namespace IngestPerf
{
  namespace OrthancSdk
  {
    void SetContext(OrthancPluginContext* context);
    OrthancPluginContext* Context();

    // Orthanc's log. From Orthanc 1.12.4, once SetLogName has named the plugin, each line carries
    // the name, file and line of the call ("ingest-perf:/Plugin.cpp:134]"), as other plugins' do.
    void SetLogName(const char* name);
    void LogError(const std::string& message, const char* file = __builtin_FILE(), int line = __builtin_LINE());
    void LogWarning(const std::string& message, const char* file = __builtin_FILE(), int line = __builtin_LINE());

    // The whole configuration Orthanc loaded (all files merged).
    Json::Value ReadConfiguration();

    const char* RunningOrthancVersion();
    bool RunningVersionAtLeast(int major, int minor, int revision);

    void AnswerJson(OrthancPluginRestOutput* output, const Json::Value& body);
    void AnswerText(OrthancPluginRestOutput* output, const MappedText& body, const char* contentType);
    void AnswerBytes(OrthancPluginRestOutput* output, const void* data, size_t size, const char* contentType);
    // A header of the answer; before the answer itself.
    void SetHttpHeader(OrthancPluginRestOutput* output, const char* name, const char* value);
    // Orthanc's redirection (Location: `location`, relative to the request's URL or not).
    void Redirect(OrthancPluginRestOutput* output, const char* location);
    // HTTP error status with a JSON body {"error": reason, ...extra}.
    void AnswerError(OrthancPluginRestOutput* output, uint16_t status, const Json::Value& body);

    // Runs a REST handler, answering 500 with a JSON reason if it throws, 503 if memory ran out.
    // Nothing escapes to Orthanc: the error answers do not throw.
    template <typename Handler>
    OrthancPluginErrorCode GuardRest(OrthancPluginRestOutput* output, Handler handler);

    void AnswerInternalError(OrthancPluginRestOutput* output, const char* what) noexcept;
    // 503 with a constant JSON body: allocates nothing in the plugin.
    void AnswerOutOfMemory(OrthancPluginRestOutput* output) noexcept;
    // Answers that GuardRest turned into a 500 or 503, since Orthanc started.
    uint64_t FailedAnswers();
    void AnswerMethodNotAllowed(OrthancPluginRestOutput* output, const char* allowed);

    // Registrations. Those that can be refused return the SDK's code; ErrorDescription names it.
    const char* ErrorDescription(OrthancPluginErrorCode code);
    bool CheckVersion();
    void SetDescription(const char* name, const char* description);
    // The page Orthanc Explorer's Plugins page links to (`uri` from Orthanc's root, "/perf/ui/...").
    void SetRootUri(const char* name, const char* uri);
    void RegisterRoute(const char* path, OrthancPluginRestCallback callback);  // without Orthanc's lock
    // JavaScript that Orthanc Explorer runs after its own, for the plugin registered as `name`.
    void ExtendOrthancExplorer(const char* name, const char* script);
    OrthancPluginErrorCode RegisterHttpFilter(OrthancPluginIncomingHttpRequestFilter2 callback);
    OrthancPluginErrorCode RegisterReceivedInstance(OrthancPluginReceivedInstanceCallback callback);
    OrthancPluginErrorCode RegisterTranscoder(OrthancPluginTranscoderCallback callback);
    OrthancPluginErrorCode RegisterInstanceFilter(OrthancPluginIncomingDicomInstanceFilter callback);
    void RegisterOnStored(OrthancPluginOnStoredInstanceCallback callback);
    void RegisterOnChange(OrthancPluginOnChangeCallback callback);
    // The storage area, with the SDK's code (its own wrapper drops it: a plugin loaded earlier may
    // hold the storage area).
    OrthancPluginErrorCode RegisterStorageArea(OrthancPluginStorageCreate create,
                                               OrthancPluginStorageReadWhole readWhole,
                                               OrthancPluginStorageReadRange readRange,
                                               OrthancPluginStorageRemove remove);

    // Orthanc's own metrics (/tools/metrics-prometheus): a value of ours, and the callback Orthanc
    // calls before it answers them (only while its "MetricsEnabled" is true).
    void SetMetricsValue(const char* name, float value);
    void RegisterRefreshMetrics(OrthancPluginRefreshMetricsCallback callback);

    // Whether Orthanc's index holds an instance of this SOP Instance UID (the SDK's LookupInstance,
    // a read of the index; "not found" is not logged by Orthanc). The plugin's thread only.
    bool InstanceExists(const char* sopInstanceUid);

    // Orthanc's command line, argument `index` ("" when absent).
    std::vector<std::string> CommandLineArguments();
    // The first argument of Orthanc's command line that is not an option: its configuration file or
    // folder ("" if none).
    std::string ConfigurationArgument();

    // What OnStored asks of the instance: strings owned by the instance, valid during the callback.
    // Each can fail the SDK's way (Unknown origin, false for the size, null), which the hooks count
    // (errors.sdkCallsFailed); the test build INGEST_PERF_FAULT_INJECTION makes them fail at random.
    inline OrthancPluginInstanceOrigin InstanceOrigin(const OrthancPluginDicomInstance* instance)
    {
      INGEST_PERF_INJECT_SDK_FAULT(OrthancPluginInstanceOrigin_Unknown);
      return OrthancPluginGetInstanceOrigin(Context(), instance);
    }
    // False when Orthanc could not answer (the SDK's -1, which is not a size).
    inline bool InstanceSize(const OrthancPluginDicomInstance* instance, uint64_t& size)
    {
      INGEST_PERF_INJECT_SDK_FAULT(false);
      const int64_t answer = OrthancPluginGetInstanceSize(Context(), instance);
      size = answer < 0 ? 0 : static_cast<uint64_t>(answer);
      return answer >= 0;
    }
    inline const char* InstanceMetadata(const OrthancPluginDicomInstance* instance, const char* name)
    {
      INGEST_PERF_INJECT_SDK_FAULT(nullptr);
      return OrthancPluginGetInstanceMetadata(Context(), instance, name);
    }
    // The instance's bytes as Orthanc holds them (after any ingest transcoding): no copy; null on failure.
    inline const void* InstanceData(const OrthancPluginDicomInstance* instance)
    {
      INGEST_PERF_INJECT_SDK_FAULT(nullptr);
      return OrthancPluginGetInstanceData(Context(), instance);
    }
    inline const char* InstanceRemoteAet(const OrthancPluginDicomInstance* instance)
    {
      INGEST_PERF_INJECT_SDK_FAULT(nullptr);
      return OrthancPluginGetInstanceRemoteAet(Context(), instance);
    }

    struct DicomInstanceFree
    {
      void operator()(OrthancPluginDicomInstance* instance) const;
    };
    using DicomInstance = std::unique_ptr<OrthancPluginDicomInstance, DicomInstanceFree>;

    // Transcodes through Orthanc's transcoders (the other plugins', then DCMTK); null when nobody could.
    DicomInstance Transcode(const void* buffer, uint32_t size, const char* syntax);
    // Into `target`, which Orthanc then owns.
    bool Serialize(OrthancPluginMemoryBuffer* target, const DicomInstance& instance);
  }


  template <typename Handler>
  OrthancPluginErrorCode OrthancSdk::GuardRest(OrthancPluginRestOutput* output, Handler handler)
  {
    try
    {
      handler();
    }
    catch (const std::bad_alloc&)
    {
      AnswerOutOfMemory(output);
    }
    catch (const std::exception& e)
    {
      AnswerInternalError(output, e.what());
    }
    catch (...)
    {
      AnswerInternalError(output, "unknown error");
    }
    return OrthancPluginErrorCode_Success;
  }
}
