#include "Platform/OrthancSdk.h"

#include "Platform/JsonText.h"
#include "Platform/MappedText.h"

#include <json/reader.h>


#include <atomic>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace IngestPerf
{
  namespace
  {
    OrthancPluginContext* globalContext = nullptr;
    std::atomic<uint64_t> failedAnswers{0};
    // The size of the last answer of this thread's REST handler (ReleaseLargeAnswerMemory).

    struct StringFree
    {
      void operator()(char* value) const { OrthancPluginFreeString(globalContext, value); }
    };

    using OrthancString = std::unique_ptr<char, StringFree>;

    // Orthanc 1.12.4's log service and its parameters, which the SDK header of 1.10.1 has not: the
    // message with the plugin's name, file and line, which Orthanc prints as "name:/file:line]" like
    // the lines of the plugins built on its framework. Same layout as the SDK's structure.
    constexpr int32_t kLogMessageService = 45;
    constexpr int32_t kLogCategoryGeneric = 1;
    struct LogMessageParameters
    {
      const char* message;
      const char* plugin;
      const char* file;
      uint32_t line;
      int32_t category;
      int32_t level;  // 0 error, 1 warning, 2 info
    };
    const char* logName = nullptr;  // set where Orthanc has that service

    void Log(int32_t level, _OrthancPluginService service, const std::string& message, const char* file, int line)
    {
      if (logName != nullptr)
      {
        const char* slash = strrchr(file, '/');
        LogMessageParameters parameters;
        parameters.message = message.c_str();
        parameters.plugin = logName;
        parameters.file = slash != nullptr ? slash + 1 : file;
        parameters.line = static_cast<uint32_t>(line);
        parameters.category = kLogCategoryGeneric;
        parameters.level = level;
        if (globalContext->InvokeService(globalContext, static_cast<_OrthancPluginService>(kLogMessageService),
                                         &parameters) == OrthancPluginErrorCode_Success)
        {
          return;
        }
      }
      globalContext->InvokeService(globalContext, service, message.c_str());
    }
  }


  void OrthancSdk::SetContext(OrthancPluginContext* context)
  {
    globalContext = context;
  }


  OrthancPluginContext* OrthancSdk::Context()
  {
    return globalContext;
  }


  void OrthancSdk::SetLogName(const char* name)
  {
    logName = RunningVersionAtLeast(1, 12, 4) ? name : nullptr;
  }


  void OrthancSdk::LogError(const std::string& message, const char* file, int line)
  {
    Log(0, _OrthancPluginService_LogError, message, file, line);
  }


  void OrthancSdk::LogWarning(const std::string& message, const char* file, int line)
  {
    Log(1, _OrthancPluginService_LogWarning, message, file, line);
  }


  Json::Value OrthancSdk::ReadConfiguration()
  {
    OrthancString text(OrthancPluginGetConfiguration(globalContext));
    if (!text)
    {
      throw std::runtime_error("Orthanc did not return its configuration");
    }
    Json::Value configuration;
    Json::CharReaderBuilder builder;
    std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
    std::string errors;
    const char* begin = text.get();
    const char* end = begin + strlen(begin);
    if (!reader->parse(begin, end, &configuration, &errors))
    {
      throw std::runtime_error("cannot parse Orthanc's configuration: " + errors);
    }
    return configuration;
  }


  const char* OrthancSdk::RunningOrthancVersion()
  {
    return globalContext->orthancVersion;
  }


  bool OrthancSdk::InstanceExists(const char* sopInstanceUid)
  {
    char* id = OrthancPluginLookupInstance(globalContext, sopInstanceUid);
    if (id == nullptr)
    {
      return false;
    }
    OrthancPluginFreeString(globalContext, id);
    return true;
  }


  bool OrthancSdk::RunningVersionAtLeast(int major, int minor, int revision)
  {
    return OrthancPluginCheckVersionAdvanced(globalContext, major, minor, revision) != 0;
  }


  void OrthancSdk::AnswerJson(OrthancPluginRestOutput* output, const Json::Value& body)
  {
    INGEST_PERF_INJECT_ALLOCATION_FAULT();
    MappedText text;
    WriteJsonText(text, body);
    OrthancPluginAnswerBuffer(globalContext, output, text.Data(), static_cast<uint32_t>(text.Size()),
                              "application/json");
  }


  void OrthancSdk::AnswerText(OrthancPluginRestOutput* output, const MappedText& body, const char* contentType)
  {
    OrthancPluginAnswerBuffer(globalContext, output, body.Data(), static_cast<uint32_t>(body.Size()), contentType);
  }


  void OrthancSdk::AnswerBytes(OrthancPluginRestOutput* output, const void* data, size_t size, const char* contentType)
  {
    OrthancPluginAnswerBuffer(globalContext, output, data, static_cast<uint32_t>(size), contentType);
  }


  void OrthancSdk::SetHttpHeader(OrthancPluginRestOutput* output, const char* name, const char* value)
  {
    OrthancPluginSetHttpHeader(globalContext, output, name, value);
  }


  void OrthancSdk::Redirect(OrthancPluginRestOutput* output, const char* location)
  {
    OrthancPluginRedirect(globalContext, output, location);
  }


  void OrthancSdk::SetMetricsValue(const char* name, float value)
  {
    OrthancPluginSetMetricsValue(globalContext, name, value, OrthancPluginMetricsType_Default);
  }


  void OrthancSdk::RegisterRefreshMetrics(OrthancPluginRefreshMetricsCallback callback)
  {
    OrthancPluginRegisterRefreshMetricsCallback(globalContext, callback);
  }


  void OrthancSdk::AnswerError(OrthancPluginRestOutput* output, uint16_t status, const Json::Value& body)
  {
    MappedText text;
    WriteJsonText(text, body);
    OrthancPluginSetHttpHeader(globalContext, output, "Content-Type", "application/json");
    OrthancPluginSendHttpStatus(globalContext, output, status, text.Data(), static_cast<uint32_t>(text.Size()));
  }


  void OrthancSdk::AnswerInternalError(OrthancPluginRestOutput* output, const char* what) noexcept
  {
    failedAnswers.fetch_add(1, std::memory_order_relaxed);
    try
    {
      Json::Value body;
      body["error"] = std::string("internal error in the ingest-perf plugin: ") + what;
      AnswerError(output, 500, body);
    }
    catch (...)
    {
      failedAnswers.fetch_sub(1, std::memory_order_relaxed);  // counted once, by the answer below
      AnswerOutOfMemory(output);
    }
  }


  void OrthancSdk::AnswerOutOfMemory(OrthancPluginRestOutput* output) noexcept
  {
    failedAnswers.fetch_add(1, std::memory_order_relaxed);
    // Constant text, no allocation on the plugin's side; the client may retry.
    static const char body[] =
      "{ \"error\" : \"the ingest-perf plugin ran out of memory while building this answer; retry "
      "later\", \"status\" : 503 }\n";
    OrthancPluginSetHttpHeader(globalContext, output, "Content-Type", "application/json");
    OrthancPluginSendHttpStatus(globalContext, output, 503, body, static_cast<uint32_t>(sizeof(body) - 1));
  }


  uint64_t OrthancSdk::FailedAnswers()
  {
    return failedAnswers.load(std::memory_order_relaxed);
  }


  void OrthancSdk::AnswerMethodNotAllowed(OrthancPluginRestOutput* output, const char* allowed)
  {
    OrthancPluginSendMethodNotAllowed(globalContext, output, allowed);
  }


  const char* OrthancSdk::ErrorDescription(OrthancPluginErrorCode code)
  {
    return OrthancPluginGetErrorDescription(globalContext, code);
  }


  bool OrthancSdk::CheckVersion()
  {
    return OrthancPluginCheckVersion(globalContext) != 0;
  }


  void OrthancSdk::SetDescription(const char* name, const char* description)
  {
    // As OrthancPluginSetDescription, with the name this copy registered under (the SDK's inline
    // reads it from the entry point, which the unit tests do not link).
    _OrthancPluginSetPluginProperty params;
    params.plugin = name;
    params.property = _OrthancPluginProperty_Description;
    params.value = description;
    globalContext->InvokeService(globalContext, _OrthancPluginService_SetPluginProperty, &params);
  }


  void OrthancSdk::SetRootUri(const char* name, const char* uri)
  {
    // As OrthancPluginSetRootUri, with the name this copy registered under (see SetDescription).
    _OrthancPluginSetPluginProperty params;
    params.plugin = name;
    params.property = _OrthancPluginProperty_RootUri;
    params.value = uri;
    globalContext->InvokeService(globalContext, _OrthancPluginService_SetPluginProperty, &params);
  }


  void OrthancSdk::RegisterRoute(const char* path, OrthancPluginRestCallback callback)
  {
    OrthancPluginRegisterRestCallbackNoLock(globalContext, path, callback);
  }


  void OrthancSdk::ExtendOrthancExplorer(const char* name, const char* script)
  {
    // As OrthancPluginExtendOrthancExplorer, with the name this copy registered under (see SetDescription).
    _OrthancPluginSetPluginProperty params;
    params.plugin = name;
    params.property = _OrthancPluginProperty_OrthancExplorer;
    params.value = script;
    globalContext->InvokeService(globalContext, _OrthancPluginService_SetPluginProperty, &params);
  }


  OrthancPluginErrorCode OrthancSdk::RegisterHttpFilter(OrthancPluginIncomingHttpRequestFilter2 callback)
  {
    return OrthancPluginRegisterIncomingHttpRequestFilter2(globalContext, callback);
  }


  OrthancPluginErrorCode OrthancSdk::RegisterReceivedInstance(OrthancPluginReceivedInstanceCallback callback)
  {
    return OrthancPluginRegisterReceivedInstanceCallback(globalContext, callback);
  }


  OrthancPluginErrorCode OrthancSdk::RegisterTranscoder(OrthancPluginTranscoderCallback callback)
  {
    return OrthancPluginRegisterTranscoderCallback(globalContext, callback);
  }


  OrthancPluginErrorCode OrthancSdk::RegisterInstanceFilter(OrthancPluginIncomingDicomInstanceFilter callback)
  {
    return OrthancPluginRegisterIncomingDicomInstanceFilter(globalContext, callback);
  }


  void OrthancSdk::RegisterOnStored(OrthancPluginOnStoredInstanceCallback callback)
  {
    OrthancPluginRegisterOnStoredInstanceCallback(globalContext, callback);
  }


  void OrthancSdk::RegisterOnChange(OrthancPluginOnChangeCallback callback)
  {
    OrthancPluginRegisterOnChangeCallback(globalContext, callback);
  }


  OrthancPluginErrorCode OrthancSdk::RegisterStorageArea(OrthancPluginStorageCreate create,
                                                         OrthancPluginStorageReadWhole readWhole,
                                                         OrthancPluginStorageReadRange readRange,
                                                         OrthancPluginStorageRemove remove)
  {
    _OrthancPluginRegisterStorageArea2 params;
    params.create = create;
    params.readWhole = readWhole;
    params.readRange = readRange;
    params.remove = remove;
    return globalContext->InvokeService(globalContext, _OrthancPluginService_RegisterStorageArea2, &params);
  }


  std::string OrthancSdk::ConfigurationArgument()
  {
    const std::vector<std::string> arguments = CommandLineArguments();
    for (size_t i = 1; i < arguments.size(); i++)
    {
      const std::string& value = arguments[i];
      if (!value.empty() && value[0] != '-')
      {
        return value;
      }
    }
    return "";
  }


  std::vector<std::string> OrthancSdk::CommandLineArguments()
  {
    std::vector<std::string> arguments;
    const uint32_t count = OrthancPluginGetCommandLineArgumentsCount(globalContext);
    for (uint32_t i = 0; i < count; i++)
    {
      const OrthancString argument(OrthancPluginGetCommandLineArgument(globalContext, i));
      arguments.emplace_back(argument ? argument.get() : "");
    }
    return arguments;
  }


  void OrthancSdk::DicomInstanceFree::operator()(OrthancPluginDicomInstance* instance) const
  {
    OrthancPluginFreeDicomInstance(globalContext, instance);
  }


  OrthancSdk::DicomInstance OrthancSdk::Transcode(const void* buffer, uint32_t size, const char* syntax)
  {
    return DicomInstance(OrthancPluginTranscodeDicomInstance(globalContext, buffer, size, syntax));
  }


  bool OrthancSdk::Serialize(OrthancPluginMemoryBuffer* target, const DicomInstance& instance)
  {
    return instance &&
           OrthancPluginSerializeDicomInstance(globalContext, target, instance.get()) == OrthancPluginErrorCode_Success;
  }
}
