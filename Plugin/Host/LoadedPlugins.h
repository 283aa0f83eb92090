// Which plugins Orthanc loads beside this one, from its configuration, for one decision: whether the
// ReceivedInstanceCallback, which only one plugin may hold, may be taken without keeping another
// plugin from it. Orthanc loads every entry of "Plugins" (a file; or a folder, whose regular files
// ending in ".so" it loads, not recursively), resolved against the configuration's folder. The
// known plugins below do not register a ReceivedInstanceCallback; any other (orthanc-python and
// orthanc-java, which register it when their script asks, a site's own plugin, an unknown name) may.
// Read once at start-up, on Orthanc's main thread: a listing of the configured folders.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace IngestPerf
{
  // The files Orthanc loads as plugins from the entries of "Plugins"; relative paths are resolved
  // against `configurationFolder`.
  std::vector<std::string> LoadedPluginFiles(const std::vector<std::string>& entries,
                                             const std::string& configurationFolder);

  // The file names (without their folder) of those that may hold the ReceivedInstanceCallback: not
  // this plugin (by its name, or `ownFile` itself whatever its name: LoadedCopy::Path), not a plugin
  // known to leave it.
  std::vector<std::string> PluginsThatMayTakeTheReceivedInstanceCallback(const std::vector<std::string>& files,
                                                                         const std::string& ownFile = std::string());

  // The other plugins of `files` (not this one, nor a copy of it), by file name, split by whether the
  // process holds them already: at this plugin's initialization, those Orthanc loaded before it
  // (their callbacks come before this plugin's in each of Orthanc's chains) and those it loads after.
  // `loaded`: whether a file is loaded now (by default, among the process's shared objects).
  // The callbacks of Orthanc's Lua (by Orthanc's names: OnStoredInstance, ReceivedInstanceFilter...)
  // that the scripts of "LuaScripts" define, read once at start-up; relative paths are resolved
  // against `configurationFolder`. Only known names come out, whatever the scripts hold.
  std::vector<std::string> LuaCallbacksDefined(const std::vector<std::string>& scripts,
                                               const std::string& configurationFolder);

  // The hooks orthanc-python's script (PythonScript) registers, by Orthanc's names (OnStoredInstance,
  // IncomingCStoreInstanceFilter...), from the registration calls its text holds; read once at start-up.
  std::vector<std::string> PythonCallbacksRegistered(const std::string& script, const std::string& configurationFolder);

  void SplitByLoadOrder(const std::vector<std::string>& files, std::vector<std::string>& before,
                        std::vector<std::string>& after,
                        const std::function<bool(const std::string&)>& loaded = nullptr,
                        const std::string& ownFile = std::string());
}
