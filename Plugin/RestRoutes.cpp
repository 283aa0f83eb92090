#include "RestRoutes.h"

#include "AssociationTracker.h"
#include "ChangeCorrelator.h"
#include "IngestStats.h"
#include "MonotonicClock.h"
#include "OrthancSdk.h"
#include "PluginStatus.h"
#include "ThreadTimelines.h"

#include <cstring>
#include <string>

namespace IngestPerf
{
  namespace
  {
    RestTargets targets{nullptr, nullptr, nullptr, nullptr, nullptr};

    void AnswerBadRequest(OrthancPluginRestOutput* output, const Json::Value& error)
    {
      OrthancSdk::AnswerError(output, 400, error);
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
      if (targets.stats == nullptr)
      {
        const StatsSnapshot empty;
        const OpenRecords none{0, 0, 0, 0};
        OrthancSdk::AnswerJson(output, ExportStats({empty, none, *targets.status, 0, 0}, filter));
        return;
      }
      const StatsSnapshot snapshot = targets.stats->Snapshot(now);
      const OpenRecords open = targets.timelines->CountOpen();
      OrthancSdk::AnswerJson(output, ExportStats({snapshot, open, *targets.status, targets.correlator->Skipped(),
                                                  targets.associations->Skipped()},
                                                 filter));
    }

    OrthancPluginErrorCode StatsRoute(OrthancPluginRestOutput* output, const char* /*url*/,
                                      const OrthancPluginHttpRequest* request)
    {
      return OrthancSdk::GuardRest(output, [&] {
        if (request->method != OrthancPluginHttpMethod_Get)
        {
          OrthancPluginSendMethodNotAllowed(OrthancSdk::Context(), output, "GET");
          return;
        }
        AnswerStats(output, request);
      });
    }

    OrthancPluginErrorCode ResetRoute(OrthancPluginRestOutput* output, const char* /*url*/,
                                      const OrthancPluginHttpRequest* request)
    {
      return OrthancSdk::GuardRest(output, [&] {
        if (request->method != OrthancPluginHttpMethod_Post)
        {
          OrthancPluginSendMethodNotAllowed(OrthancSdk::Context(), output, "POST");
          return;
        }
        Json::Value answer;
        answer["reset"] = targets.stats != nullptr;
        if (targets.stats != nullptr)
        {
          targets.stats->Reset(MonotonicNowNs(), WallNowNs());
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


  void RegisterRestRoutes(const RestTargets& restTargets)
  {
    targets = restTargets;
    OrthancPluginContext* context = OrthancSdk::Context();
    OrthancPluginRegisterRestCallbackNoLock(context, "/perf/stats", StatsRoute);
    OrthancPluginRegisterRestCallbackNoLock(context, "/perf/reset", ResetRoute);
  }
}
