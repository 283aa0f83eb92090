#include "Host/OrthancSdk.h"

#include <json/reader.h>
#include <json/writer.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace IngestPerf
{
  namespace
  {
    OrthancPluginContext* globalContext = nullptr;

    struct StringFree
    {
      void operator()(char* value) const { OrthancPluginFreeString(globalContext, value); }
    };

    using OrthancString = std::unique_ptr<char, StringFree>;

    std::string Serialize(const Json::Value& body)
    {
      Json::StreamWriterBuilder builder;
      builder["indentation"] = "  ";
      // Durations are in ms with 0.1 us resolution: four decimals, and no 4.8039000000000005.
      builder["precision"] = 4;
      builder["precisionType"] = "decimal";
      return Json::writeString(builder, body);
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


  void OrthancSdk::LogError(const std::string& message)
  {
    OrthancPluginLogError(globalContext, message.c_str());
  }


  void OrthancSdk::LogWarning(const std::string& message)
  {
    OrthancPluginLogWarning(globalContext, message.c_str());
  }


  void OrthancSdk::LogInfo(const std::string& message)
  {
    OrthancPluginLogInfo(globalContext, message.c_str());
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


  bool OrthancSdk::RunningVersionAtLeast(int major, int minor, int revision)
  {
    return OrthancPluginCheckVersionAdvanced(globalContext, major, minor, revision) != 0;
  }


  void OrthancSdk::AnswerJson(OrthancPluginRestOutput* output, const Json::Value& body)
  {
    const std::string text = Serialize(body);
    OrthancPluginAnswerBuffer(globalContext, output, text.c_str(), text.size(), "application/json");
  }


  void OrthancSdk::AnswerError(OrthancPluginRestOutput* output, uint16_t status, const Json::Value& body)
  {
    const std::string text = Serialize(body);
    OrthancPluginSetHttpHeader(globalContext, output, "Content-Type", "application/json");
    OrthancPluginSendHttpStatus(globalContext, output, status, text.c_str(), static_cast<uint32_t>(text.size()));
  }


  void OrthancSdk::AnswerInternalError(OrthancPluginRestOutput* output, const char* what)
  {
    Json::Value body;
    body["error"] = std::string("internal error in the ingest-perf plugin: ") + what;
    AnswerError(output, 500, body);
  }
}
