// Entry point: reads the configuration, builds the pipeline, registers hooks and routes.
// Data flow: IngestHooks -> InstanceTimeline (per thread) -> IngestRecorder -> IngestStats
//            -> StatsSnapshot -> JsonExporter -> RestRoutes.
#include "Configuration.h"
#include "IngestHooks.h"
#include "IngestPipeline.h"
#include "MonotonicClock.h"
#include "OrthancSdk.h"
#include "PluginStatus.h"
#include "RestRoutes.h"

#include <memory>

#ifndef INGEST_PERF_VERSION
#define INGEST_PERF_VERSION "0.0.0"
#endif

namespace
{
  using namespace IngestPerf;

  // Live until the library is unloaded: Orthanc may still run a callback while finalizing.
  std::unique_ptr<IngestPipeline> pipeline;
  PluginStatus status;
}


extern "C"
{
  ORTHANC_PLUGINS_API int32_t OrthancPluginInitialize(OrthancPluginContext* context)
  {
    OrthancSdk::SetContext(context);
    if (!OrthancPluginCheckVersion(context))
    {
      OrthancSdk::LogError(std::string("IngestPerf: this plugin needs Orthanc 1.10.1 or newer, running ") +
                           context->orthancVersion);
      return -1;
    }

    try
    {
      status.pluginVersion = INGEST_PERF_VERSION;
      status.orthancVersion = OrthancSdk::RunningOrthancVersion();
      status.startWallNs = WallNowNs();
      status.configuration = ParseConfiguration(OrthancSdk::ReadConfiguration());
    }
    catch (const ConfigurationError& e)
    {
      OrthancSdk::LogError(std::string("IngestPerf: invalid configuration, Orthanc will not start: ") + e.what());
      return -1;
    }
    catch (const std::exception& e)
    {
      OrthancSdk::LogError(std::string("IngestPerf: cannot start: ") + e.what());
      return -1;
    }

    OrthancPluginSetDescription(context, "Times every phase of DICOM ingest and serves the breakdown at /perf/stats.");

    if (status.configuration.enable)
    {
      pipeline.reset(new IngestPipeline(status.configuration));
      status.hooks = RegisterIngestHooks(status.configuration, *pipeline);
      status.storage = RegisterTimedStorageArea(status.configuration, *pipeline);
      status.restAnswers = RegisterRestAnswerTiming(status.configuration.timeRestAnswers, *pipeline);
      if (status.storage.requested && !status.storage.active)
      {
        OrthancSdk::LogWarning("IngestPerf: timed storage not started: " + status.storage.reason);
      }
      if (!status.hooks.receivedInstance.registered)
      {
        OrthancSdk::LogWarning("IngestPerf: no ReceivedInstanceCallback (" + status.hooks.receivedInstance.reason +
                               "): records start at the next visible hook; receive and preStore are unobservable");
      }
      OrthancSdk::LogWarning(std::string("IngestPerf ") + INGEST_PERF_VERSION +
                             " is timing ingest; see GET /perf/stats");
    }
    else
    {
      for (HookState* hook : {&status.hooks.httpRequestFilter, &status.hooks.receivedInstance, &status.hooks.transcoder,
                              &status.hooks.instanceFilter, &status.hooks.cstoreFilter, &status.hooks.storedInstance,
                              &status.hooks.change})
      {
        hook->reason = "IngestPerf.Enable is false";
      }
      OrthancSdk::LogWarning("IngestPerf: disabled by IngestPerf.Enable = false; no hook is registered");
    }
    RegisterRestRoutes(pipeline.get(), status);
    return 0;
  }


  ORTHANC_PLUGINS_API void OrthancPluginFinalize() {}


  ORTHANC_PLUGINS_API const char* OrthancPluginGetName()
  {
    return "ingest-perf";
  }


  ORTHANC_PLUGINS_API const char* OrthancPluginGetVersion()
  {
    return INGEST_PERF_VERSION;
  }
}
