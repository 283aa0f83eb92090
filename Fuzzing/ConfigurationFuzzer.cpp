// ParseConfiguration (Platform/Configuration): the "IngestPerf" section and the Orthanc options it
// reads. The input is the configuration text, parsed by jsoncpp as OrthancSdk::ReadConfiguration
// does. ConfigurationError is the one way to refuse (it names the key, under "IngestPerf"); any
// other exception escapes as a crash. An accepted configuration has every value in its
// documented range, and the same text parses to the same configuration again.
#include "FuzzProperty.h"

#include "Platform/Configuration.h"

#include <json/reader.h>

#include <cstring>
#include <memory>
#include <string>

using namespace IngestPerf;

namespace
{
  bool SameConfiguration(const Configuration& a, const Configuration& b)
  {
    return a.enable == b.enable && a.receivedInstanceCallback == b.receivedInstanceCallback &&
           a.maxThreads == b.maxThreads && a.changeTableSize == b.changeTableSize && a.maxPeers == b.maxPeers &&
           a.maxLabelValues == b.maxLabelValues && a.maxStreams == b.maxStreams &&
           a.transcodeTiming == b.transcodeTiming && a.timedStorage == b.timedStorage &&
           a.overwriteInstances == b.overwriteInstances && a.dicomScpTimeoutSeconds == b.dicomScpTimeoutSeconds &&
           a.dicomPort == b.dicomPort && a.ingestTranscoding == b.ingestTranscoding &&
           a.ingestTranscodingSyntax == b.ingestTranscodingSyntax && a.storageDirectory == b.storageDirectory &&
           a.syncStorageArea == b.syncStorageArea && a.storeDicom == b.storeDicom &&
           a.storageCompression == b.storageCompression && a.httpCompressionEnabled == b.httpCompressionEnabled &&
           a.storagePluginSection == b.storagePluginSection;
  }

  void CheckAccepted(const Configuration& configuration, const Json::Value& root)
  {
    FUZZ_PROPERTY(configuration.maxThreads >= 1 && configuration.maxThreads <= 65536);
    FUZZ_PROPERTY(configuration.changeTableSize >= 16 && configuration.changeTableSize <= 16777216);
    FUZZ_PROPERTY(configuration.maxPeers >= 1 && configuration.maxPeers <= 65536);
    FUZZ_PROPERTY(configuration.maxLabelValues >= 1 && configuration.maxLabelValues <= 253);
    FUZZ_PROPERTY(configuration.maxStreams >= 1 && configuration.maxStreams <= 65536);
    FUZZ_PROPERTY(configuration.transcodeTiming == TranscodeTiming::Off ||
                  configuration.transcodeTiming == TranscodeTiming::FallThrough ||
                  configuration.transcodeTiming == TranscodeTiming::Delegate);
    FUZZ_PROPERTY(configuration.dicomPort < 65536);
    FUZZ_PROPERTY(configuration.ingestTranscoding == !configuration.ingestTranscodingSyntax.empty());
    if (!root.isObject() || !root.isMember(kConfigurationSection))
    {
      const Configuration defaults;  // no section: the documented defaults
      FUZZ_PROPERTY(configuration.enable == defaults.enable && configuration.maxThreads == defaults.maxThreads &&
                    configuration.changeTableSize == defaults.changeTableSize &&
                    configuration.maxLabelValues == defaults.maxLabelValues &&
                    configuration.transcodeTiming == defaults.transcodeTiming &&
                    configuration.timedStorage == defaults.timedStorage && configuration.removedOptions.empty());
    }
  }
}


extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  // As OrthancSdk::ReadConfiguration: Orthanc's C string (up to its NUL, which stays readable:
  // jsoncpp 1.9.5 reads the byte after a final '\r' when it reports an error), jsoncpp's default
  // reader. Its refusals (its nesting limit is an exception) come before any of our code runs.
  const std::string text(reinterpret_cast<const char*>(data), strnlen(reinterpret_cast<const char*>(data), size));
  Json::CharReaderBuilder builder;
  std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
  Json::Value root;
  std::string errors;
  try
  {
    if (!reader->parse(text.c_str(), text.c_str() + text.size(), &root, &errors))
    {
      return 0;
    }
  }
  catch (const std::exception&)
  {
    return 0;
  }

  bool refused = false;
  Configuration first;
  try
  {
    first = ParseConfiguration(root);
  }
  catch (const ConfigurationError& e)
  {
    refused = true;
    FUZZ_PROPERTY(strncmp(e.what(), kConfigurationSection, strlen(kConfigurationSection)) == 0);
  }
  if (refused)
  {
    return 0;
  }
  CheckAccepted(first, root);
  FUZZ_PROPERTY(SameConfiguration(first, ParseConfiguration(root)));
  return 0;
}
