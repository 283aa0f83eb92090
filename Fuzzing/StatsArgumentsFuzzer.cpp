// ParseStatsArguments (Rest/RouteArguments): the GET arguments of /perf/stats. The input is a query
// string, cut at '&' into arguments and at their first '=' into key and value, still
// percent-encoded, as Orthanc 1.10.1 hands them over. Beyond not crashing: an accepted query
// names only known parameters, exactly, once each, with exact values; a refused one gets a 400
// body with a reason, the parameter and the allowed values, which is valid JSON. The same for
// ParseDiagnosisArguments (/perf/diagnosis), which must agree with it but for groupBy, and for
// ParseSlotsArguments (/perf/series), which must agree with it on transport and window alone.
#include "FuzzProperty.h"

#include "Rest/RouteArguments.h"

#include <json/reader.h>
#include <json/writer.h>

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

using namespace IngestPerf;

namespace
{
  bool IsDimensionName(const std::string& text, LabelDimension& dimension)
  {
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      if (text == LabelDimensionName(static_cast<LabelDimension>(d)))
      {
        dimension = static_cast<LabelDimension>(d);
        return true;
      }
    }
    return false;
  }

  bool IsTransportValue(const std::string& text)
  {
    for (size_t t = 0; t < kTransportCount; t++)
    {
      if (text == TransportName(static_cast<Transport>(t)))
      {
        return true;
      }
    }
    return text == "all";
  }

  void CheckAccepted(const StatsQuery& filter, const std::vector<std::string>& keys,
                     const std::vector<std::string>& values)
  {
    std::set<std::string> seen;
    size_t labelArguments = 0;
    for (size_t i = 0; i < keys.size(); i++)
    {
      const std::string key = DecodeQueryComponent(keys[i].c_str());
      const std::string value = DecodeQueryComponent(values[i].c_str());
      if (key.empty() && value.empty())
      {
        continue;  // an empty fragment ("/perf/stats?", "a=1&&b=2") is ignored
      }
      FUZZ_PROPERTY(seen.insert(key).second);  // no parameter twice
      LabelDimension dimension;
      if (key == "groupBy")
      {
        FUZZ_PROPERTY(filter.hasGroupBy && IsDimensionName(value, dimension) && dimension == filter.groupBy);
      }
      else
      {
        FUZZ_PROPERTY(IsDimensionName(key, dimension));  // exactly a label name, nothing after it
        if (dimension == LabelDimension::Transport)
        {
          FUZZ_PROPERTY(IsTransportValue(value));
          FUZZ_PROPERTY(filter.scope != StatsQuery::Scope::Every);
        }
        else
        {
          labelArguments++;
        }
      }
    }
    FUZZ_PROPERTY(filter.labels.size() == labelArguments);
    for (const auto& label : filter.labels)
    {
      FUZZ_PROPERTY(!label.second.empty() && label.second.size() <= LabelDictionary::kMaxValueLength);
      FUZZ_PROPERTY(label.second.find('\0') == std::string::npos);  // could match no label, a C string
      FUZZ_PROPERTY(label.first != LabelDimension::Transport);
    }
  }

  void CheckRefused(const Json::Value& error)
  {
    FUZZ_PROPERTY(error.isObject());
    FUZZ_PROPERTY(error["error"].isString() && !error["error"].asString().empty());
    FUZZ_PROPERTY(error["parameter"].isString());
    FUZZ_PROPERTY(error["allowed"].isArray() && error["allowed"].size() > 0);
    // The 400 body as OrthancSdk::AnswerError writes it must be JSON a client can read.
    Json::StreamWriterBuilder writer;
    writer["indentation"] = "  ";
    const std::string body = Json::writeString(writer, error);
    Json::CharReaderBuilder readerBuilder;
    std::unique_ptr<Json::CharReader> reader(readerBuilder.newCharReader());
    Json::Value parsed;
    std::string errors;
    FUZZ_PROPERTY(reader->parse(body.data(), body.data() + body.size(), &parsed, &errors));
    FUZZ_PROPERTY(parsed["parameter"].isString());
  }
}


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  if (size > 4096)
  {
    return 0;  // an URL longer than Orthanc's HTTP server takes adds nothing
  }
  std::vector<std::string> keys;
  std::vector<std::string> values;
  for (const std::string& argument : Fuzzing::Split(data, size, '&'))
  {
    // Orthanc hands C strings: a NUL byte ends them.
    const std::string text(argument.c_str());
    const size_t equal = text.find('=');
    keys.push_back(text.substr(0, equal));
    values.push_back(equal == std::string::npos ? std::string() : text.substr(equal + 1));
  }
  if (size == 0)
  {
    keys.clear();
    values.clear();
  }
  std::vector<const char*> keyPointers;
  std::vector<const char*> valuePointers;
  for (size_t i = 0; i < keys.size(); i++)
  {
    keyPointers.push_back(keys[i].c_str());
    valuePointers.push_back(values[i].c_str());
    // Percent-decoding only ever shortens.
    FUZZ_PROPERTY(DecodeQueryComponent(keys[i].c_str()).size() <= keys[i].size());
    FUZZ_PROPERTY(DecodeQueryComponent(values[i].c_str()).size() <= values[i].size());
  }

  StatsQuery filter;
  Json::Value error;
  if (ParseStatsArguments(filter, error, static_cast<uint32_t>(keys.size()), keyPointers.data(), valuePointers.data()))
  {
    CheckAccepted(filter, keys, values);
  }
  else
  {
    CheckRefused(error);
  }

  // /perf/diagnosis takes the same arguments but groupBy, and then always has a window unless a
  // label filter is given.
  StatsQuery diagnosis;
  Json::Value diagnosisError;
  const bool accepted = ParseDiagnosisArguments(diagnosis, diagnosisError, static_cast<uint32_t>(keys.size()),
                                                keyPointers.data(), valuePointers.data());
  const bool statsAccepted = error.isNull();
  FUZZ_PROPERTY(accepted == (statsAccepted && !filter.hasGroupBy));
  if (accepted)
  {
    FUZZ_PROPERTY(diagnosis.hasWindow != diagnosis.UsesStreams());
  }
  else
  {
    CheckRefused(diagnosisError);
  }

  // /perf/series takes transport and window only, with a window always.
  StatsQuery series;
  Json::Value seriesError;
  const bool seriesAccepted = ParseSlotsArguments(series, seriesError, static_cast<uint32_t>(keys.size()),
                                                  keyPointers.data(), valuePointers.data());
  FUZZ_PROPERTY(seriesAccepted == (statsAccepted && !filter.UsesStreams()));
  if (seriesAccepted)
  {
    FUZZ_PROPERTY(series.hasWindow && !series.UsesStreams() && series.scope == filter.scope);
    FUZZ_PROPERTY(series.window == (filter.hasWindow ? filter.window : Window::OneHour));
  }
  else
  {
    CheckRefused(seriesError);
  }
  return 0;
}
