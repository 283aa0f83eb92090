// Which plugins Orthanc loads beside this one, from its configuration, for one decision: whether the
// ReceivedInstanceCallback, which only one plugin may hold, may be taken without keeping another
// plugin from it. Orthanc loads every entry of "Plugins" (a file; or a folder, whose regular files
// ending in ".so" it loads, not recursively), resolved against the configuration's folder. The
// known plugins below do not register a ReceivedInstanceCallback; any other (orthanc-python and
// orthanc-java, which register it when their script asks, a site's own plugin, an unknown name) may.
// Read once at start-up, on Orthanc's main thread: a listing of the configured folders.
#pragma once

#include <string>
#include <vector>

namespace IngestPerf
{
  // The files Orthanc loads as plugins from the entries of "Plugins"; relative paths are resolved
  // against `configurationFolder`.
  std::vector<std::string> LoadedPluginFiles(const std::vector<std::string>& entries,
                                             const std::string& configurationFolder);

  // The file names (without their folder) of those that may hold the ReceivedInstanceCallback: not
  // this plugin, not a plugin known to leave it.
  std::vector<std::string> PluginsThatMayTakeTheReceivedInstanceCallback(const std::vector<std::string>& files);
}
