#include "RestAnswerTiming.h"

#include "IngestPipeline.h"
#include "MonotonicClock.h"
#include "OrthancSdk.h"

#include <json/reader.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    IngestPipeline* pipeline = nullptr;

    struct MemoryBuffer
    {
      OrthancPluginMemoryBuffer buffer{nullptr, 0};
      ~MemoryBuffer()
      {
        if (buffer.data != nullptr)
        {
          OrthancPluginFreeMemoryBuffer(OrthancSdk::Context(), &buffer);
        }
      }
    };

    std::string ContentTypeOf(const MemoryBuffer& headers)
    {
      Json::Value parsed;
      Json::CharReaderBuilder builder;
      std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
      const char* begin = static_cast<const char*>(headers.buffer.data);
      if (begin != nullptr && reader->parse(begin, begin + headers.buffer.size, &parsed, nullptr) && parsed.isObject())
      {
        for (const std::string& key : parsed.getMemberNames())
        {
          if ((key == "Content-Type" || key == "content-type") && parsed[key].isString())
          {
            return parsed[key].asString();
          }
        }
      }
      return "application/json";
    }

    // The query string as the client sent it (Orthanc 1.10.1 hands arguments still encoded).
    std::string UriWithQuery(const char* url, const OrthancPluginHttpRequest* request)
    {
      std::string uri(url);
      for (uint32_t i = 0; i < request->getCount; i++)
      {
        uri += (i == 0 ? "?" : "&");
        uri += request->getKeys[i];
        if (request->getValues[i] != nullptr && request->getValues[i][0] != '\0')
        {
          uri += "=";
          uri += request->getValues[i];
        }
      }
      return uri;
    }

    OrthancPluginErrorCode InstancesRoute(OrthancPluginRestOutput* output, const char* url,
                                          const OrthancPluginHttpRequest* request)
    {
      OrthancPluginContext* context = OrthancSdk::Context();
      if (request->method != OrthancPluginHttpMethod_Get && request->method != OrthancPluginHttpMethod_Post)
      {
        OrthancPluginSendMethodNotAllowed(context, output, "GET,POST");
        return OrthancPluginErrorCode_Success;
      }
      const bool isPost = (request->method == OrthancPluginHttpMethod_Post);
      if (isPost && request->bodySize > UINT32_MAX)
      {
        Json::Value error;
        error["error"] = "TimeRestAnswers forwards bodies of up to 4 GiB only";
        OrthancSdk::AnswerError(output, 413, error);
        return OrthancPluginErrorCode_Success;
      }

      // The client's headers, but Accept-Encoding: compressing is Orthanc's job on the way out.
      std::vector<const char*> keys;
      std::vector<const char*> values;
      for (uint32_t i = 0; i < request->headersCount; i++)
      {
        if (std::string(request->headersKeys[i]) != "accept-encoding")
        {
          keys.push_back(request->headersKeys[i]);
          values.push_back(request->headersValues[i]);
        }
      }

      MemoryBuffer body;
      MemoryBuffer headers;
      uint16_t status = 0;
      InstanceTimeline& timeline = pipeline->timelines.ForCurrentThread();
      timeline.SetRestForwarding(isPost);
      const OrthancPluginErrorCode code =
        OrthancPluginCallRestApi(context, &body.buffer, &headers.buffer, &status, request->method,
                                 isPost ? url : UriWithQuery(url, request).c_str(), static_cast<uint32_t>(keys.size()),
                                 keys.empty() ? nullptr : keys.data(), values.empty() ? nullptr : values.data(),
                                 request->body, static_cast<uint32_t>(request->bodySize), 0 /* built-in handler */);
      timeline.SetRestForwarding(false);
      if (code != OrthancPluginErrorCode_Success && status == 0)
      {
        return code;  // Orthanc answers with its own error, as it would have
      }

      const int64_t start = MonotonicNowNs();
      if (status == 200)
      {
        OrthancPluginAnswerBuffer(context, output, static_cast<const char*>(body.buffer.data), body.buffer.size,
                                  ContentTypeOf(headers).c_str());
      }
      else
      {
        OrthancPluginSendHttpStatus(context, output, status, static_cast<const char*>(body.buffer.data),
                                    body.buffer.size);
      }
      if (isPost)
      {
        pipeline->stats.RecordResponseSend(Transport::Rest, MonotonicNowNs() - start);
      }
      return OrthancPluginErrorCode_Success;
    }
  }


  RestAnswerState RegisterRestAnswerTiming(bool enabled, IngestPipeline& target)
  {
    RestAnswerState state;
    if (!enabled)
    {
      state.reason = "Orthanc 1.10.1 has no plugin hook around HttpOutput::Answer, where the answer is "
                     "compressed and sent; IngestPerf.TimeRestAnswers takes over /instances to time it";
      return state;
    }
    pipeline = &target;
    OrthancPluginRegisterRestCallbackNoLock(OrthancSdk::Context(), "/instances", InstancesRoute);
    state.active = true;
    return state;
  }
}
