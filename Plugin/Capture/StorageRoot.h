// Where Orthanc 1.10.1 keeps its files, computed the way Orthanc does it, so that the opt-in timed
// storage area writes exactly where Orthanc's own storage would: "StorageDirectory" (default
// "OrthancStorage"), relative paths resolved against the configuration's folder, which is the
// folder given on the command line, or the folder of the configuration file as it was given
// (relative to the working directory), or the working directory when there is no configuration.
#pragma once

#include <functional>
#include <string>

namespace IngestPerf
{
  // The folder Orthanc resolves its relative paths against ("Plugins", "StorageDirectory"...): the
  // configuration folder given on the command line, or the folder of the configuration file, made
  // absolute against `workingDirectory`; the working directory when there is no configuration.
  std::string ConfigurationFolder(const std::string& configurationArgument, const std::string& workingDirectory,
                                  const std::function<bool(const std::string&)>& isDirectory);

  // configurationArgument: the first command-line argument of Orthanc that is not an option
  // ("" if none); isDirectory tells whether a path is a folder; workingDirectory is absolute.
  std::string ResolveStorageRoot(const std::string& configurationArgument, const std::string& storageDirectory,
                                 const std::string& workingDirectory,
                                 const std::function<bool(const std::string&)>& isDirectory);
}
