#include "Rest/RouteArguments.h"

#include "Export/TraceExporter.h"
#include "Labels/LabelDictionary.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
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

    // The labels' names: what groupBy takes.
    Json::Value LabelNames()
    {
      Json::Value names = Json::arrayValue;
      for (size_t d = 0; d < kLabelDimensions; d++)
      {
        names.append(LabelDimensionName(static_cast<LabelDimension>(d)));
      }
      return names;
    }

    Json::Value AllowedParameters()
    {
      Json::Value allowed = Json::arrayValue;
      allowed.append("groupBy");
      allowed.append("window");
      for (const Json::Value& name : LabelNames())
      {
        allowed.append(name);
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
          return Fail(error, "invalid value '" + value + "' for parameter 'groupBy'", key, LabelNames());
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
    return true;
  }


  namespace
  {
    // A whole positive number of at most 9 digits, nothing else.
    bool ParseCount(const std::string& text, int64_t& value)
    {
      if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
      {
        return false;
      }
      value = std::stoll(text);
      return true;
    }

    // "90s", "5m", "1h" or a number of seconds.
    bool ParseWindow(const std::string& text, int64_t& seconds)
    {
      int64_t unit = 1;
      std::string digits = text;
      if (!text.empty() && (text.back() == 's' || text.back() == 'm' || text.back() == 'h'))
      {
        unit = text.back() == 'h' ? 3600 : (text.back() == 'm' ? 60 : 1);
        digits.pop_back();
      }
      int64_t count = 0;
      if (!ParseCount(digits, count) || count * unit < 1 || count * unit > RecentQuery::kMaxWindowSeconds)
      {
        return false;
      }
      seconds = count * unit;
      return true;
    }

    Json::Value OneAllowed(const char* text)
    {
      Json::Value allowed = Json::arrayValue;
      allowed.append(text);
      return allowed;
    }

    // Splits the arguments of a route into its own (`own`, decoded) and the others.
    struct Arguments
    {
      std::vector<std::pair<std::string, std::string>> own;
      std::vector<const char*> otherKeys;
      std::vector<const char*> otherValues;
    };

    bool SplitArguments(Arguments& arguments, Json::Value& error, uint32_t count, const char* const* keys,
                        const char* const* values, const std::vector<std::string>& names)
    {
      for (uint32_t i = 0; i < count; i++)
      {
        const std::string key = DecodeQueryComponent(keys[i]);
        if (std::find(names.begin(), names.end(), key) == names.end())
        {
          arguments.otherKeys.push_back(keys[i]);
          arguments.otherValues.push_back(values[i]);
          continue;
        }
        for (const auto& seen : arguments.own)
        {
          if (seen.first == key)
          {
            return Fail(error, "parameter '" + key + "' given twice", key, Json::arrayValue);
          }
        }
        arguments.own.emplace_back(key, DecodeQueryComponent(values[i]));
      }
      return true;
    }
  }


  bool ParseSlowestArguments(RecentQuery& query, Json::Value& error, uint32_t count, const char* const* keys,
                             const char* const* values)
  {
    query = RecentQuery();
    Arguments arguments;
    if (!SplitArguments(arguments, error, count, keys, values, {"n", "window", "phase"}))
    {
      return false;
    }
    for (const auto& argument : arguments.own)
    {
      const std::string& key = argument.first;
      const std::string& value = argument.second;
      if (key == "n")
      {
        int64_t n = 0;
        if (!ParseCount(value, n) || n < 1 || n > static_cast<int64_t>(RecentQuery::kMaxCount))
        {
          return Fail(error, "invalid value '" + value + "' for parameter 'n'", key,
                      OneAllowed("an integer from 1 to 1000"));
        }
        query.count = static_cast<size_t>(n);
      }
      else if (key == "window")
      {
        if (!ParseWindow(value, query.windowSeconds))
        {
          return Fail(error, "invalid value '" + value + "' for parameter 'window'", key,
                      OneAllowed("seconds, or a number followed by s, m or h (1m, 5m, 15m, 1h), from 1s to 24h"));
        }
        query.window = value;
      }
      else
      {
        bool found = false;
        Json::Value allowed = Json::arrayValue;
        for (size_t p = 0; p < kPhaseCount; p++)
        {
          const Phase phase = static_cast<Phase>(p);
          // Only what is known when the instance's record is written (not changeDispatch, which
          // comes later on Orthanc's change thread).
          if (!PhaseInRecentInstances(phase))
          {
            continue;
          }
          allowed.append(DefinitionOf(phase).name);
          if (value == DefinitionOf(phase).name)
          {
            query.phase = phase;
            found = true;
          }
        }
        if (!found)
        {
          return Fail(error, "invalid value '" + value + "' for parameter 'phase'", key, allowed);
        }
      }
    }
    if (!ParseStatsArguments(query.filter, error, static_cast<uint32_t>(arguments.otherKeys.size()),
                             arguments.otherKeys.data(), arguments.otherValues.data()))
    {
      if (error["allowed"].isArray() && error["error"].asString().rfind("unknown parameter", 0) == 0)
      {
        Json::Value allowed = Json::arrayValue;
        for (const char* name : {"n", "window", "phase"})
        {
          allowed.append(name);
        }
        for (const Json::Value& name : error["allowed"])
        {
          if (name.asString() != "groupBy")
          {
            allowed.append(name);
          }
        }
        error["allowed"] = allowed;
      }
      return false;
    }
    if (query.filter.hasGroupBy)
    {
      return Fail(error, "groupBy is not supported by /perf/slowest: filter by a label instead", "groupBy",
                  Json::arrayValue);
    }
    return true;
  }


  bool ParseDiagnosisArguments(StatsQuery& query, Json::Value& error, uint32_t count, const char* const* keys,
                               const char* const* values)
  {
    if (!ParseStatsArguments(query, error, count, keys, values))
    {
      return false;
    }
    if (query.hasGroupBy)
    {
      Json::Value allowed = AllowedParameters();
      allowed.removeIndex(0, nullptr);  // "groupBy" itself
      return Fail(error, "groupBy is not supported by /perf/diagnosis: filter by a label instead", "groupBy", allowed);
    }
    if (query.hasWindow && query.UsesStreams())
    {
      // The diagnosis reads a window's figures per transport; a sender's are kept since the reset.
      Json::Value allowed = Json::arrayValue;
      allowed.append("transport");
      return Fail(error,
                  std::string("window=") + WindowName(query.window) +
                    " is diagnosed per transport only: it cannot be combined with label filters",
                  "window", allowed);
    }
    // "Now" unless asked otherwise: label filters are kept since the reset only.
    if (!query.hasWindow && !query.UsesStreams())
    {
      query.hasWindow = true;
      query.window = Window::FiveMinutes;
    }
    return true;
  }


  bool ParseSlotsArguments(StatsQuery& query, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values)
  {
    Json::Value allowed = Json::arrayValue;
    allowed.append("transport");
    allowed.append("window");
    for (uint32_t i = 0; i < count; i++)
    {
      const std::string key = DecodeQueryComponent(keys[i]);
      if (key != "transport" && key != "window" && !(key.empty() && DecodeQueryComponent(values[i]).empty()))
      {
        return Fail(error, "unknown parameter '" + key + "': /perf/slots is kept per transport only", key, allowed);
      }
    }
    // The rest (values, NUL bytes, a parameter given twice) as /perf/stats checks them.
    if (!ParseStatsArguments(query, error, count, keys, values))
    {
      return false;
    }
    if (!query.hasWindow)
    {
      query.hasWindow = true;
      query.window = Window::OneHour;
    }
    return true;
  }


  bool ParseTraceArguments(int64_t& seconds, Json::Value& error, uint32_t count, const char* const* keys,
                           const char* const* values)
  {
    seconds = 60;
    bool seen = false;
    for (uint32_t i = 0; i < count; i++)
    {
      const std::string key = DecodeQueryComponent(keys[i]);
      const std::string value = DecodeQueryComponent(values[i]);
      if (key.empty() && value.empty())
      {
        continue;
      }
      if (key != "seconds")
      {
        return Fail(error, "unknown parameter '" + key + "'", key, OneAllowed("seconds"));
      }
      if (seen)
      {
        return Fail(error, "parameter 'seconds' given twice", key, OneAllowed("seconds"));
      }
      seen = true;
      if (!ParseCount(value, seconds) || seconds < 1 || seconds > kMaxTraceSeconds)
      {
        return Fail(error, "invalid value '" + value + "' for parameter 'seconds'", key,
                    OneAllowed("an integer from 1 to 3600"));
      }
    }
    return true;
  }


  bool ParseNoArguments(Json::Value& error, uint32_t count, const char* const* keys, const char* const* values,
                        const char* path)
  {
    for (uint32_t i = 0; i < count; i++)
    {
      const std::string key = DecodeQueryComponent(keys[i]);
      if (!key.empty() || values[i][0] != '\0')
      {
        return Fail(error, "unknown parameter '" + key + "': " + path + " takes none", key, Json::arrayValue);
      }
    }
    return true;
  }
}
