#include "Capture/StorageRoot.h"

#include <filesystem>

namespace IngestPerf
{
  std::string ConfigurationFolder(const std::string& configurationArgument, const std::string& workingDirectory,
                                  const std::function<bool(const std::string&)>& isDirectory)
  {
    namespace fs = std::filesystem;
    const fs::path cwd(workingDirectory);
    fs::path base;
    if (configurationArgument.empty())
    {
      base = cwd;
    }
    else if (isDirectory(configurationArgument))
    {
      base = fs::path(configurationArgument);
    }
    else
    {
      base = fs::path(configurationArgument).parent_path();
    }
    if (base.is_relative())
    {
      base = cwd / base;
    }
    return base.lexically_normal().string();
  }


  std::string ResolveStorageRoot(const std::string& configurationArgument, const std::string& storageDirectory,
                                 const std::string& workingDirectory,
                                 const std::function<bool(const std::string&)>& isDirectory)
  {
    namespace fs = std::filesystem;
    const fs::path base(ConfigurationFolder(configurationArgument, workingDirectory, isDirectory));
    const fs::path directory(storageDirectory.empty() ? std::string("OrthancStorage") : storageDirectory);
    const fs::path root = directory.is_absolute() ? directory : base / directory;
    return root.lexically_normal().string();
  }
}
