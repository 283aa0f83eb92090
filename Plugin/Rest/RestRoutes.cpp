#include "Rest/RestRoutes.h"

#include "Export/PrometheusExporter.h"
#include "Host/OrthancMetrics.h"
#include "Recording/IngestPipeline.h"
#include "Host/OrthancSdk.h"
#include "Host/PluginStatus.h"

#include <cstring>
#include <string>
#include <utility>

namespace IngestPerf
{
  namespace
  {
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
        OrthancSdk::AnswerMethodNotAllowed(output, allowed);
        return false;
      }
      return true;
    }

    void AnswerStats(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      StatsQuery filter;
      Json::Value error;
      if (!ParseStatsArguments(filter, error, request->getCount, request->getKeys, request->getValues))
      {
        AnswerBadRequest(output, error);
        return;
      }
      filter.hashedPeers = status->configuration.hashPeers;
      IngestReport report;
      report.status = status;
      if (const IngestPipeline* pipeline = ActivePipeline())
      {
        report = pipeline->Collect(filter, *status,
                                   ReadOpenConnections(static_cast<uint16_t>(status->configuration.dicomPort)),
                                   OtherRestRequestsInProgress);
      }
      report.failedAnswers = OrthancSdk::FailedAnswers();
      OrthancSdk::AnswerJson(output, ExportStats(report, filter));
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

    // No parameter: a scrape takes everything, and unknown parameters are refused as /perf/stats does.
    void AnswerMetrics(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      for (uint32_t i = 0; i < request->getCount; i++)
      {
        const std::string key = DecodeQueryComponent(request->getKeys[i]);
        if (!key.empty() || request->getValues[i][0] != '\0')
        {
          Json::Value error;
          error["error"] = "unknown parameter '" + key + "': /perf/metrics takes none";
          error["parameter"] = key;
          error["allowed"] = Json::arrayValue;
          AnswerBadRequest(output, error);
          return;
        }
      }
      StatsQuery query;
      query.eachStream = true;
      IngestReport report;
      report.status = status;
      if (const IngestPipeline* pipeline = ActivePipeline())
      {
        report =
          pipeline->Collect(query, *status, ReadOpenConnections(static_cast<uint16_t>(status->configuration.dicomPort)),
                            OtherRestRequestsInProgress);
      }
      OrthancSdk::AnswerText(output, ExportPrometheus(report), kPrometheusContentType);
    }

    OrthancPluginErrorCode MetricsRoute(OrthancPluginRestOutput* output, const char* /*url*/,
                                        const OrthancPluginHttpRequest* request)
    {
      return OrthancSdk::GuardRest(output, [&] {
        if (RequireMethod(output, request, OrthancPluginHttpMethod_Get, "GET"))
        {
          AnswerMetrics(output, request);
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
        IngestPipeline* pipeline = ActivePipeline();
        answer["reset"] = pipeline != nullptr;
        if (pipeline != nullptr)
        {
          pipeline->Reset();
        }
        OrthancSdk::AnswerJson(output, answer);
      });
    }
  }


  namespace
  {
    int HexValue(char c)
    {
      if (c >= '0' && c <= '9')
      {
        return c - '0';
      }
      if (c >= 'a' && c <= 'f')
      {
        return c - 'a' + 10;
      }
      if (c >= 'A' && c <= 'F')
      {
        return c - 'A' + 10;
      }
      return -1;
    }

    Json::Value AllowedParameters()
    {
      Json::Value allowed = Json::arrayValue;
      allowed.append("groupBy");
      allowed.append("window");
      for (size_t d = 0; d < kLabelDimensions; d++)
      {
        allowed.append(LabelDimensionName(static_cast<LabelDimension>(d)));
      }
      return allowed;
    }

    bool Fail(Json::Value& error, const std::string& message, const std::string& parameter, const Json::Value& allowed)
    {
      error["error"] = message;
      error["parameter"] = parameter;
      error["allowed"] = allowed;
      return false;
    }
  }


  std::string DecodeQueryComponent(const char* text)
  {
    std::string decoded;
    for (const char* c = text; c != nullptr && *c != '\0'; c++)
    {
      const int high = (c[0] == '%' && c[1] != '\0') ? HexValue(c[1]) : -1;
      const int low = (high >= 0 && c[2] != '\0') ? HexValue(c[2]) : -1;
      if (high >= 0 && low >= 0)
      {
        decoded += static_cast<char>(high * 16 + low);
        c += 2;
      }
      else
      {
        decoded += (*c == '+') ? ' ' : *c;
      }
    }
    return decoded;
  }


  bool ParseStatsArguments(StatsQuery& filter, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values)
  {
    filter = StatsQuery();
    bool seen[kLabelDimensions + 2] = {};  // the labels, groupBy, window
    for (uint32_t i = 0; i < count; i++)
    {
      // Orthanc 1.10.1 hands GET arguments to plugins still percent-encoded.
      const std::string key = DecodeQueryComponent(keys[i]);
      const std::string value = DecodeQueryComponent(values[i]);
      if (key.empty() && value.empty())
      {
        continue;  // an empty fragment: "/perf/stats?", "a=1&&b=2"
      }
      // Decoded, "%00" is a NUL, and the names and values below are compared as C strings:
      // "dicom%00x" would read as "dicom". A name holds no NUL, nor does a label.
      if (key.find('\0') != std::string::npos)
      {
        return Fail(error, "a NUL byte in a parameter name", key, AllowedParameters());
      }
      if (value.find('\0') != std::string::npos)
      {
        return Fail(error, "a NUL byte in the value of parameter '" + key + "'", key, AllowedParameters());
      }
      LabelDimension dimension = LabelDimension::Transport;
      const bool isGroupBy = (key == "groupBy");
      const bool isWindow = (key == "window");
      if (!isGroupBy && !isWindow && !ParseLabelDimension(dimension, key.c_str()))
      {
        return Fail(error, "unknown parameter '" + key + "'", key, AllowedParameters());
      }
      bool& already = seen[isGroupBy  ? kLabelDimensions
                           : isWindow ? kLabelDimensions + 1
                                      : static_cast<size_t>(dimension)];
      if (already)
      {
        return Fail(error, "parameter '" + key + "' given twice", key, AllowedParameters());
      }
      already = true;

      if (isWindow)
      {
        if (!ParseWindow(filter.window, value.c_str()))
        {
          Json::Value allowed = Json::arrayValue;
          for (size_t w = 0; w < kWindowCount; w++)
          {
            allowed.append(WindowName(static_cast<Window>(w)));
          }
          return Fail(error, "invalid value '" + value + "' for parameter 'window'", key, allowed);
        }
        filter.hasWindow = true;
      }
      else if (isGroupBy)
      {
        if (!ParseLabelDimension(filter.groupBy, value.c_str()))
        {
          Json::Value allowed = AllowedParameters();
          allowed.removeIndex(0, nullptr);  // "groupBy" itself
          return Fail(error, "invalid value '" + value + "' for parameter 'groupBy'", key, allowed);
        }
        filter.hasGroupBy = true;
      }
      else if (dimension == LabelDimension::Transport)
      {
        if (value == "all")
        {
          filter.scope = StatsQuery::Scope::MergedOnly;
        }
        else if (ParseTransport(filter.transport, value.c_str()))
        {
          filter.scope = StatsQuery::Scope::Single;
        }
        else
        {
          Json::Value allowed = Json::arrayValue;
          for (size_t t = 0; t < kTransportCount; t++)
          {
            allowed.append(TransportName(static_cast<Transport>(t)));
          }
          allowed.append("all");
          return Fail(error, "invalid value '" + value + "' for parameter 'transport'", key, allowed);
        }
      }
      else if (value.empty() || value.size() > LabelDictionary::kMaxValueLength)
      {
        Json::Value allowed = Json::arrayValue;
        allowed.append("a label value of 1 to 64 characters, \"(none)\" or \"(other)\"");
        return Fail(error, "invalid value '" + value + "' for parameter '" + key + "'", key, allowed);
      }
      else
      {
        filter.labels.emplace_back(dimension, value);
      }
    }
    if (filter.hasWindow && filter.UsesStreams())
    {
      Json::Value allowed = Json::arrayValue;
      allowed.append("transport");
      return Fail(error,
                  std::string("window=") + WindowName(filter.window) +
                    " is kept per transport only: it cannot be combined with label filters or groupBy",
                  "window", allowed);
    }
    return true;
  }


  void RegisterRestRoutes(const PluginStatus& pluginStatus)
  {
    status = &pluginStatus;
    OrthancSdk::RegisterRoute("/perf/stats", StatsRoute);
    OrthancSdk::RegisterRoute("/perf/reset", ResetRoute);
    OrthancSdk::RegisterRoute("/perf/metrics", MetricsRoute);
  }
}
