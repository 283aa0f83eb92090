#include "Platform/Configuration.h"

#include <json/writer.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <vector>

namespace IngestPerf
{
  const char* const kConfigurationSection = "IngestPerf";


  Json::Value ReceivedInstanceModeValue(ReceivedInstanceMode mode)
  {
    switch (mode)
    {
      case ReceivedInstanceMode::Take:
        return true;
      case ReceivedInstanceMode::Leave:
        return false;
      default:
        return "Auto";
    }
  }

  namespace
  {
    std::string Describe(const Json::Value& value)
    {
      Json::StreamWriterBuilder builder;
      builder["indentation"] = "";
      return Json::writeString(builder, value);
    }

    const std::set<std::string>& KnownOptions()
    {
      static const std::set<std::string> known = {"Enable",
                                                  "ReceivedInstanceCallback",
                                                  "MaxThreads",
                                                  "ChangeTableSize",
                                                  "MaxPeers",
                                                  "MaxLabelValues",
                                                  "MaxStreams",
                                                  "TranscodeTiming",
                                                  "TimedStorage",
                                                  "HashPeers",
                                                  "RecentInstances",
                                                  "HttpConnectionIdentity",
                                                  "PhasePartsSampling",
                                                  "PrometheusLabels"};
      return known;
    }

    // The options of earlier releases, and why they are gone.
    // const char* values: each text stays whole in the binary, where the release test finds its links.
    const std::map<std::string, const char*>& FormerOptions()
    {
      static const std::map<std::string, const char*> former = {
        {"DicomTcpNoDelay",
         "a plugin does not write Orthanc's environment: start Orthanc with TCP_NODELAY=1 in its "
         "environment instead (systemd: Environment=TCP_NODELAY=1 in a drop-in; docker: -e "
         "TCP_NODELAY=1), which DCMTK reads for every association (docs/configuration.md#dicom-tcp_nodelay)"},
        {"MaxSeries", "its name is MaxStreams"},
        {"TimeRestAnswers", "no Orthanc has a hook around its REST answer, whose compression and sending stay "
                            "unobservable (docs/phases.md#http-answers)"},
      };
      return former;
    }

    // Edits (insert, delete, substitute, ignoring case) from `a` to `b`; an adjacent swap counts one.
    size_t EditDistance(const std::string& a, const std::string& b)
    {
      const auto same = [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
      };
      std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
      for (size_t i = 0; i <= a.size(); i++)
      {
        for (size_t j = 0; j <= b.size(); j++)
        {
          if (i == 0 || j == 0)
          {
            d[i][j] = i + j;
            continue;
          }
          d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
          if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
          {
            d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
          }
        }
      }
      return d[a.size()][b.size()];
    }

    std::string KeyName(const std::string& key)
    {
      return std::string(kConfigurationSection) + "." + key;
    }

    bool ReadBool(const Json::Value& section, const std::string& key, bool defaultValue)
    {
      if (!section.isMember(key))
      {
        return defaultValue;
      }
      const Json::Value& value = section[key];
      if (!value.isBool())
      {
        throw ConfigurationError(KeyName(key) + ": expected true or false, got " + Describe(value));
      }
      return value.asBool();
    }

    size_t ReadInteger(const Json::Value& section, const std::string& key, size_t defaultValue, size_t minimum,
                       size_t maximum)
    {
      if (!section.isMember(key))
      {
        return defaultValue;
      }
      const Json::Value& value = section[key];
      const std::string expected =
        ": expected an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum);
      if (!value.isIntegral() || value.isBool())
      {
        throw ConfigurationError(KeyName(key) + expected + ", got " + Describe(value));
      }
      if ((value.isInt64() && (value.asInt64() < static_cast<Json::Int64>(minimum) ||
                               value.asInt64() > static_cast<Json::Int64>(maximum))) ||
          (!value.isInt64() && value.asUInt64() > maximum))
      {
        throw ConfigurationError(KeyName(key) + expected + ", got " + Describe(value));
      }
      return static_cast<size_t>(value.asUInt64());
    }
  }


  std::string FindStoragePluginSection(const Json::Value& orthancConfiguration)
  {
    // The database plugins store files only with "EnableStorage"; the object-storage plugins
    // always do once their section is present.
    for (const char* section : {"PostgreSQL", "MySQL", "Odbc"})
    {
      const Json::Value& value = orthancConfiguration[section];
      if (value.isObject() && value["EnableStorage"].isBool() && value["EnableStorage"].asBool())
      {
        return std::string(section) + ".EnableStorage";
      }
    }
    for (const char* section : {"AwsS3Storage", "AzureBlobStorage", "GoogleCloudStorage"})
    {
      if (orthancConfiguration.isMember(section))
      {
        return section;
      }
    }
    return "";
  }


  std::string FindIndexPluginSection(const Json::Value& orthancConfiguration)
  {
    for (const char* section : {"PostgreSQL", "MySQL", "Odbc"})
    {
      const Json::Value& value = orthancConfiguration[section];
      if (value.isObject() && value["EnableIndex"].isBool() && value["EnableIndex"].asBool())
      {
        return section;
      }
    }
    return "";
  }


  std::string ClosestKnownOption(const std::string& key)
  {
    if (key.size() > 64)
    {
      return "";  // no known key is that long: not worth the table
    }
    std::string closest;
    size_t best = 0;
    for (const std::string& known : KnownOptions())
    {
      const size_t distance = EditDistance(key, known);
      if (closest.empty() || distance < best)
      {
        closest = known;
        best = distance;
      }
    }
    // A few edits, and fewer than a third of the key: "Enabled" is Enable, "Foo" is nothing.
    return best <= 3 && best * 3 <= std::max(key.size(), closest.size()) ? closest : "";
  }


  std::string UnknownOption::Message() const
  {
    return "unknown option " + key + (closest.empty() ? std::string() : "; did you mean " + closest + "?");
  }


  std::string RemovedOption::Message() const
  {
    return "option " + key + " was removed (" + reason + "): ignored";
  }


  const char* TranscodeTimingName(TranscodeTiming timing)
  {
    switch (timing)
    {
      case TranscodeTiming::FallThrough:
        return "FallThrough";
      case TranscodeTiming::Delegate:
        return "Delegate";
      default:
        return "Off";
    }
  }


  Configuration ParseConfiguration(const Json::Value& orthancConfiguration, const OrthancVersion& running)
  {
    Configuration configuration;
    configuration.orthanc = running;
    configuration.httpCompressionEnabled = running.HttpCompressionDefault();

    if (orthancConfiguration.isObject())
    {
      // A Boolean up to 1.12, also a string from 1.13.0 ("Never", "Always", "IfChanged").
      const Json::Value& overwrite = orthancConfiguration["OverwriteInstances"];
      if (overwrite.isString())
      {
        configuration.overwriteInstancesMode = overwrite.asString();
        configuration.overwriteInstances = overwrite.asString() == "Always" || overwrite.asString() == "IfChanged";
      }
      else
      {
        configuration.overwriteInstances = overwrite.isBool() && overwrite.asBool();
      }
      const Json::Value& timeout = orthancConfiguration["DicomScpTimeout"];
      if (timeout.isUInt())
      {
        configuration.dicomScpTimeoutSeconds = timeout.asUInt();
      }
      auto readBool = [&](const char* key, bool& target) {
        if (orthancConfiguration[key].isBool())
        {
          target = orthancConfiguration[key].asBool();
        }
      };
      if (orthancConfiguration["DicomPort"].isUInt() && orthancConfiguration["DicomPort"].asUInt() < 65536)
      {
        configuration.dicomPort = orthancConfiguration["DicomPort"].asUInt();
      }
      auto readCount = [&](const char* key, unsigned int& target, unsigned int maximum) {
        if (orthancConfiguration[key].isUInt() && orthancConfiguration[key].asUInt() >= 1 &&
            orthancConfiguration[key].asUInt() <= maximum)
        {
          target = orthancConfiguration[key].asUInt();
        }
      };
      readCount("DicomThreadsCount", configuration.dicomThreadsCount, 65535);
      readCount("HttpThreadsCount", configuration.httpThreadsCount, 65535);
      readCount("HttpPort", configuration.httpPort, 65535);
      if (orthancConfiguration["LuaScripts"].isArray())
      {
        configuration.luaScripts = orthancConfiguration["LuaScripts"].size();
        for (const Json::Value& entry : orthancConfiguration["LuaScripts"])
        {
          if (entry.isString())
          {
            configuration.luaScriptPaths.push_back(entry.asString());
          }
        }
      }
      else if (orthancConfiguration["LuaScripts"].isString())
      {
        configuration.luaScripts = 1;
        configuration.luaScriptPaths.push_back(orthancConfiguration["LuaScripts"].asString());
      }
      if (orthancConfiguration["PythonScript"].isString())
      {
        configuration.pythonScript = orthancConfiguration["PythonScript"].asString();
      }
      if (orthancConfiguration["Plugins"].isArray())
      {
        for (const Json::Value& entry : orthancConfiguration["Plugins"])
        {
          if (entry.isString())
          {
            configuration.plugins.push_back(entry.asString());
          }
        }
      }
      configuration.indexPluginSection = FindIndexPluginSection(orthancConfiguration);
      readBool("SyncStorageArea", configuration.syncStorageArea);
      readBool("StoreDicom", configuration.storeDicom);
      readBool("StorageCompression", configuration.storageCompression);
      readBool("HttpCompressionEnabled", configuration.httpCompressionEnabled);
      readBool("KeepAlive", configuration.httpKeepAlive);
      if (orthancConfiguration["StorageDirectory"].isString())
      {
        configuration.storageDirectory = orthancConfiguration["StorageDirectory"].asString();
      }
      // Orthanc's limits, MaximumStorageSize in MiB (Orthanc multiplies it by 1024 * 1024); 0: none.
      if (orthancConfiguration["MaximumStorageSize"].isUInt64())
      {
        configuration.maximumStorageBytes = orthancConfiguration["MaximumStorageSize"].asUInt64() * 1024 * 1024;
      }
      if (orthancConfiguration["MaximumPatientCount"].isUInt64())
      {
        configuration.maximumPatientCount = orthancConfiguration["MaximumPatientCount"].asUInt64();
      }
      configuration.storagePluginSection = FindStoragePluginSection(orthancConfiguration);
      const Json::Value& transcoding = orthancConfiguration["IngestTranscoding"];
      if (transcoding.isString() && !transcoding.asString().empty())
      {
        configuration.ingestTranscoding = true;
        configuration.ingestTranscodingSyntax = transcoding.asString();
      }
    }
    configuration.duplicatesBeforeFilters =
      running.AnswersDuplicatesBeforeFilters() &&
      (configuration.overwriteInstancesMode == "IfChanged" || !configuration.overwriteInstances);

    if (!orthancConfiguration.isObject() || !orthancConfiguration.isMember(kConfigurationSection))
    {
      return configuration;
    }
    const Json::Value& section = orthancConfiguration[kConfigurationSection];
    if (!section.isObject())
    {
      throw ConfigurationError(std::string(kConfigurationSection) + ": expected a JSON object, got " +
                               Describe(section));
    }

    for (const std::string& key : section.getMemberNames())
    {
      const auto former = FormerOptions().find(key);
      if (former != FormerOptions().end())
      {
        configuration.removedOptions.push_back(RemovedOption{key, former->second});
      }
      else if (KnownOptions().count(key) == 0)
      {
        configuration.unknownOptions.push_back(UnknownOption{key, ClosestKnownOption(key)});
      }
    }

    configuration.enable = ReadBool(section, "Enable", configuration.enable);
    if (section.isMember("ReceivedInstanceCallback"))
    {
      const Json::Value& value = section["ReceivedInstanceCallback"];
      if (value.isBool())
      {
        configuration.receivedInstanceCallback =
          value.asBool() ? ReceivedInstanceMode::Take : ReceivedInstanceMode::Leave;
      }
      else if (value.isString() && value.asString() == "Auto")
      {
        configuration.receivedInstanceCallback = ReceivedInstanceMode::Auto;
      }
      else
      {
        throw ConfigurationError(KeyName("ReceivedInstanceCallback") + ": expected \"Auto\", true or false, got " +
                                 Describe(value));
      }
    }
    configuration.maxThreads = ReadInteger(section, "MaxThreads", configuration.maxThreads, 1, 65536);
    configuration.changeTableSize =
      ReadInteger(section, "ChangeTableSize", configuration.changeTableSize, 16, 16777216);
    configuration.maxPeers = ReadInteger(section, "MaxPeers", configuration.maxPeers, 1, 65536);
    configuration.maxLabelValues = ReadInteger(section, "MaxLabelValues", configuration.maxLabelValues, 1, 253);
    configuration.maxStreams = ReadInteger(section, "MaxStreams", configuration.maxStreams, 1, 65536);
    configuration.recentInstances =
      ReadInteger(section, "RecentInstances", configuration.recentInstances, kMinRecentInstances, kMaxRecentInstances);
    configuration.timedStorage = ReadBool(section, "TimedStorage", configuration.timedStorage);
    configuration.hashPeers = ReadBool(section, "HashPeers", configuration.hashPeers);
    configuration.httpConnectionIdentity =
      ReadBool(section, "HttpConnectionIdentity", configuration.httpConnectionIdentity);
    configuration.phasePartsSampling = static_cast<uint32_t>(
      ReadInteger(section, "PhasePartsSampling", configuration.phasePartsSampling, 0, kMaxPhasePartsSampling));
    if (section.isMember("PrometheusLabels"))
    {
      const Json::Value& labels = section["PrometheusLabels"];
      const auto strings = [](const Json::Value& list) {
        return std::all_of(list.begin(), list.end(), [](const Json::Value& item) { return item.isString(); });
      };
      if (!labels.isArray() || !strings(labels))
      {
        throw ConfigurationError(KeyName("PrometheusLabels") + ": expected a list of label names, got " +
                                 Describe(labels));
      }
      configuration.prometheusLabels.clear();
      for (const Json::Value& label : labels)
      {
        configuration.prometheusLabels.push_back(label.asString());
      }
    }
    if (section.isMember("TranscodeTiming"))
    {
      const Json::Value& timing = section["TranscodeTiming"];
      if (timing.isString() && timing.asString() == "Off")
      {
        configuration.transcodeTiming = TranscodeTiming::Off;
      }
      else if (timing.isString() && timing.asString() == "FallThrough")
      {
        configuration.transcodeTiming = TranscodeTiming::FallThrough;
      }
      else if (timing.isString() && timing.asString() == "Delegate")
      {
        configuration.transcodeTiming = TranscodeTiming::Delegate;
      }
      else
      {
        throw ConfigurationError(KeyName("TranscodeTiming") +
                                 ": expected \"Off\", \"FallThrough\" or \"Delegate\", got " + Describe(timing));
      }
    }
    return configuration;
  }
}
