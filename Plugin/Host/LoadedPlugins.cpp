#include "Host/LoadedPlugins.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace IngestPerf
{
  namespace
  {
    // Orthanc's own plugins and those of its project that never register a ReceivedInstanceCallback,
    // by the name of their file up to ".so" (Debian's and the official builds' names).
    // This plugin, a copy of it or one of its test builds (LoadedCopy keeps a second copy inert).
    const char* const kThisPlugin = "libOrthancIngestPerf";

    const char* const kKnownToLeaveIt[] = {
      "libOrthancDicomWeb",
      "libOrthancGdcm",
      "libOrthancPostgreSQLIndex",
      "libOrthancPostgreSQLStorage",
      "libOrthancMySQLIndex",
      "libOrthancMySQLStorage",
      "libOrthancOdbcIndex",
      "libOrthancOdbcStorage",
      "libOrthancWebViewer",
      "libStoneWebViewer",
      "libOrthancWSI",
      "libOrthancExplorer2",
      "libOrthancAuthorization",
      "libOrthancTransfers",
      "libOrthancOHIF",
      "libOrthancVolView",
      "libOrthancAwsS3Storage",
      "libOrthancAzureBlobStorage",
      "libOrthancGoogleCloudStorage",
      "libModalityWorklists",
      "libServeFolders",
      "libConnectivityChecks",
      "libOrthancNeuro",
      "libOrthancIndexer",
      "libOrthancSTL",
      "libOrthancTcia",
    };

    std::string NameUpToSo(const std::string& fileName)
    {
      const size_t so = fileName.find(".so");
      return so == std::string::npos ? fileName : fileName.substr(0, so);
    }
  }


  std::vector<std::string> LoadedPluginFiles(const std::vector<std::string>& entries,
                                             const std::string& configurationFolder)
  {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const std::string& entry : entries)
    {
      fs::path path(entry);
      if (path.is_relative())
      {
        path = fs::path(configurationFolder) / path;
      }
      std::error_code error;
      if (!fs::is_directory(path, error))
      {
        files.push_back(path.lexically_normal().string());
        continue;
      }
      for (const fs::directory_entry& item : fs::directory_iterator(path, error))
      {
        if (item.is_regular_file(error) && item.path().extension() == ".so")
        {
          files.push_back(item.path().lexically_normal().string());
        }
      }
    }
    return files;
  }


  std::vector<std::string> PluginsThatMayTakeTheReceivedInstanceCallback(const std::vector<std::string>& files)
  {
    std::vector<std::string> unknown;
    for (const std::string& file : files)
    {
      const std::string name = std::filesystem::path(file).filename().string();
      const std::string stem = NameUpToSo(name);
      if (stem.compare(0, strlen(kThisPlugin), kThisPlugin) != 0 &&
          std::find(std::begin(kKnownToLeaveIt), std::end(kKnownToLeaveIt), stem) == std::end(kKnownToLeaveIt))
      {
        unknown.push_back(name);
      }
    }
    return unknown;
  }
}
