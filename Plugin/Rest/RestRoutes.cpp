#include "Rest/RestRoutes.h"

#include "Correlation/IngestWatcher.h"
#include "Diagnosis/DiagnosisInput.h"
#include "Export/DiagnosisExporter.h"
#include "Export/JsonExporter.h"
#include "Export/PrometheusExporter.h"
#include "Export/SlotsExporter.h"
#include "Export/SlowestExporter.h"
#include "Export/TraceExporter.h"
#include "Export/VocabularyExporter.h"
#include "Platform/OrthancSdk.h"
#include "Platform/PluginStatus.h"
#include "Recording/IngestState.h"
#include "Rest/RouteArguments.h"
#include "Ui/UiFiles.h"
#include "Vocabulary/Routes.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    const PluginStatus* status = nullptr;

    void AnswerBadRequest(OrthancPluginRestOutput* output, const Json::Value& error)
    {
      OrthancSdk::AnswerError(output, 400, error);
    }

    // On the heap: a report is tens of KB, and Orthanc's HTTP threads have small stacks (Collect
    // itself reads /tools/metrics-prometheus through Orthanc, deeper on the same stack).
    std::unique_ptr<IngestReport> CollectReport(const StatsQuery& query)
    {
      std::unique_ptr<IngestReport> report;
      if (IngestState* state = ActiveIngestState())
      {
        report.reset(new IngestReport(state->Collect(query, *status)));
      }
      else
      {
        report.reset(new IngestReport());
      }
      report->status = status;
      if (const IngestWatcher* watcher = ActiveIngestWatcher())
      {
        report->pluginCost.watcher = watcher->Cost();  // the thread's own figures: no reading here
      }
      return report;
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
      const std::unique_ptr<IngestReport> report = CollectReport(filter);
      report->failedAnswers = OrthancSdk::FailedAnswers();
      MappedText text;
      JsonWriter writer(text);
      WriteStats(writer, *report, filter);
      OrthancSdk::AnswerText(output, text, "application/json");
    }

    void AnswerDiagnosis(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      StatsQuery query;
      Json::Value error;
      if (!ParseDiagnosisArguments(query, error, request->getCount, request->getKeys, request->getValues))
      {
        AnswerBadRequest(output, error);
        return;
      }
      query.hashedPeers = status->configuration.hashPeers;
      query.partQuantiles = false;  // the diagnosis reads the parts' means
      const std::unique_ptr<IngestReport> report = CollectReport(query);
      const std::unique_ptr<DiagnosisInput> input(
        new DiagnosisInput(GatherDiagnosisInput(*report, query, ActiveIngestWatcher())));
      OrthancSdk::AnswerJson(output, ExportDiagnosis(Diagnose(*input), *input, *status));
    }

    // Answers 400 and returns false when a route that takes no parameter is given one.
    bool RefuseAnyParameter(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request, Route route)
    {
      Json::Value error;
      if (!ParseNoArguments(error, request->getCount, request->getKeys, request->getValues, DefinitionOf(route).path))
      {
        AnswerBadRequest(output, error);
        return false;
      }
      return true;
    }

    // No parameter: a scrape takes everything.
    void AnswerMetrics(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      if (!RefuseAnyParameter(output, request, Route::Metrics))
      {
        return;
      }
      const std::unique_ptr<IngestReport> report = CollectReport(MetricsQuery());
      // And the diagnosis GET /perf/diagnosis answers without parameters (the last 5 minutes).
      Diagnosis diagnosis;
      if (report->collected)
      {
        StatsQuery window;
        Json::Value unused;
        ParseDiagnosisArguments(window, unused, 0, nullptr, nullptr);
        window.hashedPeers = status->configuration.hashPeers;
        window.partQuantiles = false;
        const std::unique_ptr<IngestReport> windowed = CollectReport(window);
        diagnosis = Diagnose(GatherDiagnosisInput(*windowed, window, ActiveIngestWatcher()));
      }
      MappedText text;
      ExportPrometheus(*report, text, report->collected ? &diagnosis : nullptr);
      OrthancSdk::AnswerText(output, text, kPrometheusContentType);
    }

    void AnswerSlowest(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      RecentQuery query;
      Json::Value error;
      if (!ParseSlowestArguments(query, error, request->getCount, request->getKeys, request->getValues))
      {
        AnswerBadRequest(output, error);
        return;
      }
      query.filter.hashedPeers = status->configuration.hashPeers;
      RecentReport report;
      if (IngestState* state = ActiveIngestState())
      {
        report = state->CollectSlowest(query);
      }
      MappedText text;
      JsonWriter writer(text);
      WriteSlowest(writer, report, query, status->configuration.hashPeers);
      OrthancSdk::AnswerText(output, text, "application/json");
    }

    void AnswerTrace(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      int64_t seconds = 0;
      Json::Value error;
      if (!ParseTraceArguments(seconds, error, request->getCount, request->getKeys, request->getValues))
      {
        AnswerBadRequest(output, error);
        return;
      }
      RecentReport report;
      if (IngestState* state = ActiveIngestState())
      {
        report = state->CollectRecent(seconds);
      }
      MappedText text;
      JsonWriter writer(text);
      WriteTrace(writer, report, seconds, status->configuration.hashPeers);
      OrthancSdk::AnswerText(output, text, "application/json");
    }

    void AnswerSlots(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      StatsQuery query;
      Json::Value error;
      if (!ParseSlotsArguments(query, error, request->getCount, request->getKeys, request->getValues))
      {
        AnswerBadRequest(output, error);
        return;
      }
      SlotsReport report;
      if (IngestState* state = ActiveIngestState())
      {
        report = state->CollectSlots(query.window);
      }
      MappedText text;
      JsonWriter writer(text);
      WriteSlots(writer, report, query);
      OrthancSdk::AnswerText(output, text, "application/json");
    }

    // The page's files. The page itself makes only same-origin requests (relative URLs, so that
    // the browser's credentials for Orthanc apply): the policy refuses anything else, and a page
    // that tried would show it in the browser's console.
    void AnswerFileOfThePage(OrthancPluginRestOutput* output, const std::string& path)
    {
      const UiFile* file = FindUiFile(path);
      if (file == nullptr)
      {
        Json::Value error;
        error["error"] = "no such file of the ingest-perf page: '" + path + "'";
        error["page"] = kUiPage;
        OrthancSdk::AnswerError(output, 404, error);
        return;
      }
      OrthancSdk::SetHttpHeader(output, "Cache-Control", "no-cache");
      OrthancSdk::SetHttpHeader(output, "X-Content-Type-Options", "nosniff");
      OrthancSdk::SetHttpHeader(output, "Content-Security-Policy",
                                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'");
      OrthancSdk::AnswerBytes(output, file->data, file->size, UiContentType(file->path));
    }

    // The page's window (/perf/ui/?window=15m) kept across its redirections: only a known window
    // goes into the Location header, nothing else of the request.
    std::string PageQuery(const OrthancPluginHttpRequest* request)
    {
      for (uint32_t i = 0; i < request->getCount; i++)
      {
        Window window;
        if (DecodeQueryComponent(request->getKeys[i]) == "window" &&
            ParseWindow(window, DecodeQueryComponent(request->getValues[i]).c_str()))
        {
          return std::string("?window=") + WindowName(window);
        }
      }
      return std::string();
    }

    // Orthanc drops a URL's trailing slash before it calls a plugin: /perf/ui and /perf/ui/ both
    // arrive here, and the page's relative URLs need its folder. Both are sent to ui/index.html,
    // which from /perf/ui/ is /perf/ui/ui/index.html, sent one level up (AnswerUiFile).
    void AnswerUi(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      OrthancSdk::Redirect(output, ("ui/index.html" + PageQuery(request)).c_str());
    }

    void AnswerUiFile(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      const std::string path = request->groupsCount == 1 ? request->groups[0] : "";
      if (path == "ui/index.html")
      {
        OrthancSdk::Redirect(output, ("../index.html" + PageQuery(request)).c_str());
      }
      else
      {
        AnswerFileOfThePage(output, path);
      }
    }

    void AnswerReset(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* /*request*/)
    {
      Json::Value answer;
      IngestState* state = ActiveIngestState();
      answer["reset"] = state != nullptr;
      if (state != nullptr)
      {
        state->Reset();
      }
      if (IngestWatcher* watcher = ActiveIngestWatcher())
      {
        watcher->ResetCost();
      }
      OrthancSdk::AnswerJson(output, answer);
    }

    // No parameter, the same answer for everyone: what the page, the report and the tests read.
    void AnswerVocabulary(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request)
    {
      if (RefuseAnyParameter(output, request, Route::Vocabulary))
      {
        OrthancSdk::AnswerJson(output, ExportVocabulary());
      }
    }

    using RouteHandler = void (*)(OrthancPluginRestOutput* output, const OrthancPluginHttpRequest* request);

    OrthancPluginHttpMethod HttpMethodOf(RouteMethod method)
    {
      return method == RouteMethod::Post ? OrthancPluginHttpMethod_Post : OrthancPluginHttpMethod_Get;
    }

    // The one guard of every route: its method (405 with Allow otherwise), then its handler, whose
    // exceptions become a 500 or 503 with a JSON reason (OrthancSdk::GuardRest). One instance per
    // route, since Orthanc calls a plain function.
    template <Route route, RouteHandler handler>
    OrthancPluginErrorCode Protect(OrthancPluginRestOutput* output, const char* /*url*/,
                                   const OrthancPluginHttpRequest* request)
    {
      return OrthancSdk::GuardRest(output, [&] {
        const RouteDefinition& definition = DefinitionOf(route);
        if (request->method != HttpMethodOf(definition.method))
        {
          OrthancSdk::AnswerMethodNotAllowed(output, RouteMethodName(definition.method));
          return;
        }
        handler(output, request);
      });
    }

    struct RouteRegistration
    {
      Route route;
      OrthancPluginRestCallback callback;
    };

    // Every route of Vocabulary/Routes, in its order, with its handler.
    constexpr RouteRegistration kRouteTable[] = {
      {Route::Stats, Protect<Route::Stats, AnswerStats>},
      {Route::Metrics, Protect<Route::Metrics, AnswerMetrics>},
      {Route::Slowest, Protect<Route::Slowest, AnswerSlowest>},
      {Route::Trace, Protect<Route::Trace, AnswerTrace>},
      {Route::Diagnosis, Protect<Route::Diagnosis, AnswerDiagnosis>},
      {Route::Slots, Protect<Route::Slots, AnswerSlots>},
      {Route::Vocabulary, Protect<Route::Vocabulary, AnswerVocabulary>},
      {Route::Reset, Protect<Route::Reset, AnswerReset>},
      {Route::Ui, Protect<Route::Ui, AnswerUi>},
      {Route::UiFile, Protect<Route::UiFile, AnswerUiFile>},
    };

    constexpr bool EveryRouteOnceInOrder()
    {
      for (size_t i = 0; i < kRouteCount; i++)
      {
        if (static_cast<size_t>(kRouteTable[i].route) != i)
        {
          return false;
        }
      }
      return sizeof(kRouteTable) / sizeof(kRouteTable[0]) == kRouteCount;
    }
    static_assert(EveryRouteOnceInOrder(), "kRouteTable has every route of Vocabulary/Routes once, in its order");
  }


  StatsQuery MetricsQuery()
  {
    StatsQuery query;
    query.eachStream = true;
    query.eachStreamPhases = 0;
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      query.eachStreamPhases |= IsPerStreamPhase(static_cast<Phase>(p)) ? uint32_t(1) << p : 0;
    }
    query.details = false;
    query.partQuantiles = false;
    return query;
  }


  void RegisterRestRoutes(const PluginStatus& pluginStatus)
  {
    status = &pluginStatus;
    for (const RouteRegistration& registration : kRouteTable)
    {
      OrthancSdk::RegisterRoute(DefinitionOf(registration.route).pattern, registration.callback);
    }
  }
}
