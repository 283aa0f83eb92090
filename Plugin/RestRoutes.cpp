#include "RestRoutes.h"

#include "IngestPipeline.h"
#include "MonotonicClock.h"
#include "OrthancSdk.h"
#include "PluginStatus.h"

#include <cstring>
#include <string>

namespace IngestPerf
{
  namespace
  {
    IngestPipeline* pipeline = nullptr;
    const PluginStatus* status = nullptr;

    void AnswerBadRequest(OrthancPluginRestOutput* output, const Json::Value& error)
    {
      OrthancSdk::AnswerError(output, 400, error);
    }

    // Answers 405 and returns false for any other method.
    bool RequireMethod(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request,
                       OrthancPluginHttpMethod method, const char* allowed)
    {
      if (request->method != method)
      {
        OrthancPluginSendMethodNotAllowed(OrthancSdk::Context(), output, allowed);
        return false;
      }
      return true;
    }

    void AnswerStats(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      ExportFilter filter;
      Json::Value error;
      if (!ParseStatsArguments(filter, error, request->getCount, request->getKeys, request->getValues))
      {
        AnswerBadRequest(output, error);
        return;
      }
      const int64_t now = MonotonicNowNs();
      if (pipeline == nullptr)
      {
        const StatsSnapshot empty;
        const OpenRecords none{0, 0, 0, 0};
        OrthancSdk::AnswerJson(output, ExportStats({empty, none, *status, 0, 0}, filter));
        return;
      }
      const StatsSnapshot snapshot = pipeline->stats.Snapshot(now);
      const OpenRecords open = pipeline->timelines.CountOpen();
      OrthancSdk::AnswerJson(
        output, ExportStats({snapshot, open, *status, pipeline->correlator.Skipped(), pipeline->associations.Skipped()},
                            filter));
    }

    OrthancPluginErrorCode StatsRoute(OrthancPluginRestOutput* output, const char* /*url*/,
                                      const OrthancPluginHttpRequest* request)
    {
      return OrthancSdk::GuardRest(output, [&] {
        if (RequireMethod(output, request, OrthancPluginHttpMethod_Get, "GET"))
        {
          AnswerStats(output, request);
        }
      });
    }

    OrthancPluginErrorCode ResetRoute(OrthancPluginRestOutput* output, const char* /*url*/,
                                      const OrthancPluginHttpRequest* request)
    {
      return OrthancSdk::GuardRest(output, [&] {
        if (!RequireMethod(output, request, OrthancPluginHttpMethod_Post, "POST"))
        {
          return;
        }
        Json::Value answer;
        answer["reset"] = pipeline != nullptr;
        if (pipeline != nullptr)
        {
          pipeline->stats.Reset(MonotonicNowNs(), WallNowNs());
        }
        OrthancSdk::AnswerJson(output, answer);
      });
    }
  }


  bool ParseStatsArguments(ExportFilter& filter, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values)
  {
    filter = ExportFilter();
    for (uint32_t i = 0; i < count; i++)
    {
      const std::string key = keys[i];
      const std::string value = values[i] != nullptr ? values[i] : "";
      if (key == "transport")
      {
        if (value == "all")
        {
          filter.scope = ExportFilter::Scope::MergedOnly;
        }
        else if (ParseTransport(filter.transport, value.c_str()))
        {
          filter.scope = ExportFilter::Scope::Single;
        }
        else
        {
          error["error"] = "invalid value '" + value + "' for parameter 'transport'";
          error["parameter"] = "transport";
          Json::Value& allowed = error["allowed"];
          for (size_t t = 0; t < kTransportCount; t++)
          {
            allowed.append(TransportName(static_cast<Transport>(t)));
          }
          allowed.append("all");
          return false;
        }
      }
      else
      {
        error["error"] = "unknown parameter '" + key + "'";
        error["parameter"] = key;
        error["allowed"].append("transport");
        return false;
      }
    }
    return true;
  }


  void RegisterRestRoutes(IngestPipeline* ingestPipeline, const PluginStatus& pluginStatus)
  {
    pipeline = ingestPipeline;
    status = &pluginStatus;
    OrthancPluginContext* context = OrthancSdk::Context();
    OrthancPluginRegisterRestCallbackNoLock(context, "/perf/stats", StatsRoute);
    OrthancPluginRegisterRestCallbackNoLock(context, "/perf/reset", ResetRoute);
  }
}
