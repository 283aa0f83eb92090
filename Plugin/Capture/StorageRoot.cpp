#include "Capture/StorageRoot.h"

#include <filesystem>

namespace IngestPerf
{
  std::string ResolveStorageRoot(const std::string& configurationArgument, const std::string& storageDirectory,
                                 const std::string& workingDirectory,
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

    const fs::path directory(storageDirectory.empty() ? std::string("OrthancStorage") : storageDirectory);
    const fs::path root = directory.is_absolute() ? directory : base / directory;
    return root.lexically_normal().string();
  }
}
