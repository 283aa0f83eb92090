#include "Host/LoadedPlugins.h"

#include <link.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

    // A path of Orthanc's configuration, relative ones against its folder, as Orthanc reads them.
    std::filesystem::path Resolved(const std::string& path, const std::string& configurationFolder)
    {
      const std::filesystem::path resolved(path);
      return resolved.is_relative() ? std::filesystem::path(configurationFolder) / resolved : resolved;
    }

    // By its name, or by the file itself: an administrator or a packager may rename it.
    bool IsThisPlugin(const std::string& file, const std::string& ownFile)
    {
      const std::string name = std::filesystem::path(file).filename().string();
      std::error_code error;
      return NameUpToSo(name).compare(0, strlen(kThisPlugin), kThisPlugin) == 0 ||
             (!ownFile.empty() && std::filesystem::equivalent(file, ownFile, error));
    }

    // The shared objects of the process (their paths as the loader opened them), read once.
    std::vector<std::string> SharedObjects()
    {
      std::vector<std::string> objects;
      dl_iterate_phdr(
        [](struct dl_phdr_info* info, size_t, void* data) -> int {
          if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          {
            static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
          }
          return 0;
        },
        &objects);
      return objects;
    }
  }


  std::vector<std::string> LoadedPluginFiles(const std::vector<std::string>& entries,
                                             const std::string& configurationFolder)
  {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    for (const std::string& entry : entries)
    {
      const fs::path path = Resolved(entry, configurationFolder);
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


  std::vector<std::string> PluginsThatMayTakeTheReceivedInstanceCallback(const std::vector<std::string>& files,
                                                                         const std::string& ownFile)
  {
    std::vector<std::string> unknown;
    for (const std::string& file : files)
    {
      const std::string name = std::filesystem::path(file).filename().string();
      const std::string stem = NameUpToSo(name);
      if (!IsThisPlugin(file, ownFile) &&
          std::find(std::begin(kKnownToLeaveIt), std::end(kKnownToLeaveIt), stem) == std::end(kKnownToLeaveIt))
      {
        unknown.push_back(name);
      }
    }
    return unknown;
  }


  std::vector<std::string> PythonCallbacksRegistered(const std::string& script, const std::string& configurationFolder)
  {
    // orthanc-python's registration functions, and the hooks of Orthanc they register.
    static const std::pair<const char*, const char*> kRegistrations[] = {
      {"RegisterIncomingHttpRequestFilter", "IncomingHttpRequestFilter"},
      {"RegisterReceivedInstanceCallback", "ReceivedInstanceCallback"},
      {"RegisterIncomingCStoreInstanceFilter", "IncomingCStoreInstanceFilter"},
      {"RegisterOnStoredInstanceCallback", "OnStoredInstance"},
      {"RegisterOnChangeCallback", "OnChange"},
    };
    std::vector<std::string> registered;
    if (script.empty())
    {
      return registered;
    }
    const std::filesystem::path path = Resolved(script, configurationFolder);
    // The functions' names, called or passed on (orthanc.RegisterOnChangeCallback(f), or as a value),
    // outside the script's comment lines.
    std::ifstream stream(path, std::ios::binary);
    std::string code;
    for (std::string line; std::getline(stream, line);)
    {
      const size_t first = line.find_first_not_of(" \t");
      if (first != std::string::npos && line[first] != '#')
      {
        code += line + '\n';
      }
    }
    for (const auto& registration : kRegistrations)
    {
      const size_t length = strlen(registration.first);
      for (size_t at = code.find(registration.first); at != std::string::npos;
           at = code.find(registration.first, at + 1))
      {
        const char next = at + length < code.size() ? code[at + length] : '\n';
        if (!isalnum(static_cast<unsigned char>(next)) && next != '_')
        {
          registered.push_back(registration.second);
          break;
        }
      }
    }
    return registered;
  }


  std::vector<std::string> LuaCallbacksDefined(const std::vector<std::string>& scripts,
                                               const std::string& configurationFolder)
  {
    // Orthanc's Lua callbacks that run on ingest or hold the Lua lock while instances arrive.
    static const char* const kCallbacks[] = {"IncomingHttpRequestFilter",
                                             "ReceivedInstanceFilter",
                                             "IncomingInstanceFilter",
                                             "OnStoredInstance",
                                             "OnStableSeries",
                                             "OnStableStudy",
                                             "OnStablePatient",
                                             "OnChange"};
    std::string text;
    for (const std::string& script : scripts)
    {
      const std::filesystem::path path = Resolved(script, configurationFolder);
      std::ifstream stream(path, std::ios::binary);
      text.append(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
      text += '\n';
    }
    std::vector<std::string> defined;
    for (const char* name : kCallbacks)
    {
      // "function Name(" with any spaces, the way Lua defines a global function.
      for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
      {
        size_t before = at;
        while (before > 0 && (text[before - 1] == ' ' || text[before - 1] == '\t'))
        {
          before--;
        }
        size_t after = at + strlen(name);
        while (after < text.size() && (text[after] == ' ' || text[after] == '\t'))
        {
          after++;
        }
        if (before >= 8 && text.compare(before - 8, 8, "function") == 0 && after < text.size() && text[after] == '(')
        {
          defined.push_back(name);
          break;
        }
      }
    }
    return defined;
  }


  void SplitByLoadOrder(const std::vector<std::string>& files, std::vector<std::string>& before,
                        std::vector<std::string>& after, const std::function<bool(const std::string&)>& loaded,
                        const std::string& ownFile)
  {
    std::vector<std::string> objects;
    if (!loaded)
    {
      objects = SharedObjects();
    }
    for (const std::string& file : files)
    {
      const std::string name = std::filesystem::path(file).filename().string();
      if (IsThisPlugin(file, ownFile))
      {
        continue;
      }
      bool isLoaded = false;
      if (loaded)
      {
        isLoaded = loaded(file);
      }
      for (size_t i = 0; i < objects.size() && !isLoaded; i++)
      {
        std::error_code error;
        isLoaded = std::filesystem::equivalent(objects[i], file, error);
      }
      (isLoaded ? before : after).push_back(name);
    }
  }
}
