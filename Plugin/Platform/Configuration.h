// The "IngestPerf" section of orthanc.json, and the few global Orthanc options that change what
// the plugin measures. A wrong type or an out-of-range value throws ConfigurationError naming the
// key (the plugin then stays inert, Orthanc runs on); an unknown key is only listed, with the known
// key closest to it, since Orthanc and its other plugins start with keys they do not know.
#pragma once

#include "Platform/OrthancVersion.h"

#include <json/value.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace IngestPerf
{
  class ConfigurationError : public std::runtime_error
  {
  public:
    explicit ConfigurationError(const std::string& message) :
      std::runtime_error(message)
    {
    }
  };

  enum class TranscodeTiming
  {
    Off,          // no transcoder registered: registering one changes how Orthanc decodes frames
    FallThrough,  // timestamp, then let Orthanc's transcoders work: no cost, bound includes read-back
    Delegate      // transcode through the SDK and time exactly: serialises transcodes in 1.10.1
  };

  const char* TranscodeTimingName(TranscodeTiming timing);

  // IngestPerf.ReceivedInstanceCallback: whether the plugin takes the ReceivedInstanceCallback, which
  // only one plugin may hold (always once every plugin has loaded).
  enum class ReceivedInstanceMode
  {
    Auto,  // only when every plugin Orthanc loads is one known not to take it (Host/LoadedPlugins)
    Take,  // true: whatever else is loaded (a plugin that holds it keeps it; Orthanc logs the refusal)
    Leave  // false
  };

  // "Auto", true or false, as the option is written.
  Json::Value ReceivedInstanceModeValue(ReceivedInstanceMode mode);

  // A key of the IngestPerf section that the plugin does not know: ignored, and said.
  struct UnknownOption
  {
    std::string key;              // as written
    std::string closest;          // the known key it most likely meant, "" when none is close
    std::string Message() const;  // "unknown option Timedstorage; did you mean TimedStorage?"
  };

  // A key of the IngestPerf section that an earlier release knew: ignored, and said with why.
  struct RemovedOption
  {
    std::string key;              // as written: "MaxSeries"
    std::string reason;           // "its name is MaxStreams"
    std::string Message() const;  // "option MaxSeries was removed (its name is MaxStreams): ignored"
  };

  // The known key closest to `key` (case and at most a few edits apart), or "".
  std::string ClosestKnownOption(const std::string& key);

  // The bounds of IngestPerf.RecentInstances: the ring of Metrics/RecentInstances clamps to them too.
  constexpr size_t kMinRecentInstances = 16;
  constexpr size_t kMaxRecentInstances = 262144;
  constexpr size_t kMaxPhasePartsSampling = 1000000;

  struct Configuration
  {
    bool enable = true;
    ReceivedInstanceMode receivedInstanceCallback = ReceivedInstanceMode::Auto;
    size_t maxThreads = 512;
    size_t changeTableSize = 16384;
    size_t maxPeers = 256;
    size_t maxLabelValues = 32;
    size_t maxStreams = 128;        // MaxStreams: labelled streams with histograms of their own
    size_t recentInstances = 4096;  // the ring of /perf/slowest and /perf/trace (Metrics/RecentInstances.h)
    TranscodeTiming transcodeTiming = TranscodeTiming::Off;
    bool timedStorage = false;
    // AETs and client addresses exported as stable short hashes (Labels/PeerPseudonym.h).
    bool hashPeers = false;
    // Read the client's port from civetweb's request information (Platform/HttpConnectionIdentity).
    bool httpConnectionIdentity = true;
    // One instance in this many, on each thread, has its phases split into on-CPU, waiting-for-CPU
    // and blocked time (Platform/ThreadClocks.h); 0: none.
    uint32_t phasePartsSampling = 50;
    // The labels with figures of their own in /perf/metrics, as written (Export/PrometheusExporter
    // checks the names at start-up: PrometheusLabelsOf).
    std::vector<std::string> prometheusLabels = {"remoteAet", "remoteIp"};
    // Keys of the section that were ignored, and those read under their former names.
    std::vector<UnknownOption> unknownOptions;
    std::vector<RemovedOption> removedOptions;

    // The running Orthanc, and what it does by default.
    OrthancVersion orthanc;

    // Read from Orthanc's own options.
    // A store replaces an instance already stored: true, "Always" or "IfChanged" (1.13's strings).
    bool overwriteInstances = false;
    std::string overwriteInstancesMode;  // the string configured, "" for a Boolean or none
    // The running Orthanc answers a duplicate before the filters (OrthancVersion), under this mode.
    bool duplicatesBeforeFilters = false;
    unsigned int dicomScpTimeoutSeconds = 30;
    unsigned int dicomPort = 4242;
    bool ingestTranscoding = false;
    std::string ingestTranscodingSyntax;
    std::string storageDirectory = "OrthancStorage";
    uint64_t maximumStorageBytes = 0;  // MaximumStorageSize; 0: no limit
    uint64_t maximumPatientCount = 0;
    bool syncStorageArea = true;
    bool storeDicom = true;
    bool storageCompression = false;
    bool httpCompressionEnabled = true;  // Orthanc's default, which depends on its version
    bool httpKeepAlive = true;           // KeepAlive: HTTP connections serve several requests
    // Orthanc's worker pools and ports, with Orthanc's defaults (read by the diagnosis).
    unsigned int dicomThreadsCount = 4;
    unsigned int httpThreadsCount = 50;
    unsigned int httpPort = 8042;
    size_t luaScripts = 0;                    // entries of LuaScripts
    std::vector<std::string> luaScriptPaths;  // those entries, as written
    // The callbacks of Orthanc's Lua that the scripts define (Host/LoadedPlugins reads them at start-up).
    std::vector<std::string> luaCallbacks;
    std::string pythonScript;  // orthanc-python's PythonScript, as written ("" if none)
    // The hooks orthanc-python's script registers, by Orthanc's names (Host/LoadedPlugins, at start-up).
    std::vector<std::string> pythonCallbacks;
    std::vector<std::string> plugins;  // entries of Plugins: files and folders, as written
    // The configuration section of a database plugin that holds the index ("PostgreSQL", "MySQL",
    // "Odbc"), or "" for Orthanc's own SQLite.
    std::string indexPluginSection;
    // The configuration section of a known storage plugin that is enabled ("" if none): the timed
    // storage area must not take its place.
    std::string storagePluginSection;
  };

  // `orthancConfiguration` is the whole configuration Orthanc gives to plugins.
  Configuration ParseConfiguration(const Json::Value& orthancConfiguration,
                                   const OrthancVersion& running = OrthancVersion());

  // "PostgreSQL.EnableStorage", "AwsS3Storage"...: a known storage plugin enabled, or "".
  std::string FindStoragePluginSection(const Json::Value& orthancConfiguration);

  // "PostgreSQL", "MySQL" or "Odbc" when that database plugin is enabled as the index, or "".
  std::string FindIndexPluginSection(const Json::Value& orthancConfiguration);

  // The section name and the documented keys with their defaults, for the README and errors.
  extern const char* const kConfigurationSection;
}
