// The only place that talks to the Orthanc plugin C SDK for things other than the ingest
// callbacks: RAII for the strings the SDK allocates, logging, the configuration, answering REST
// calls, and turning C++ exceptions into an OrthancPluginErrorCode.
#pragma once

#include <orthanc/OrthancCPlugin.h>

#include <json/value.h>

#include <string>

namespace IngestPerf
{
  namespace OrthancSdk
  {
    void SetContext(OrthancPluginContext* context);
    OrthancPluginContext* Context();

    void LogError(const std::string& message);
    void LogWarning(const std::string& message);
    void LogInfo(const std::string& message);

    // The whole configuration Orthanc loaded (all files merged).
    Json::Value ReadConfiguration();

    const char* RunningOrthancVersion();
    bool RunningVersionAtLeast(int major, int minor, int revision);

    void AnswerJson(OrthancPluginRestOutput* output, const Json::Value& body);
    // HTTP error status with a JSON body {"error": reason, ...extra}.
    void AnswerError(OrthancPluginRestOutput* output, uint16_t status, const Json::Value& body);

    // Runs a REST handler, answering 500 with a JSON reason if it throws.
    template <typename Handler>
    OrthancPluginErrorCode GuardRest(OrthancPluginRestOutput* output, Handler handler);

    void AnswerInternalError(OrthancPluginRestOutput* output, const char* what);
  }


  template <typename Handler>
  OrthancPluginErrorCode OrthancSdk::GuardRest(OrthancPluginRestOutput* output, Handler handler)
  {
    try
    {
      handler();
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
