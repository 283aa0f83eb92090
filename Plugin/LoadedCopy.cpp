#include "LoadedCopy.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace IngestPerf
{
  namespace
  {
    constexpr const char* kOwnerVariable = "ORTHANC_INGEST_PERF_LOADED_COPY";

    int marker;            // its address differs between libraries
    bool running = false;  // this library runs the plugin (it was claimed)
    std::string duplicateName;

    std::string OwnAddress()
    {
      char text[32];
      snprintf(text, sizeof(text), "%p", static_cast<void*>(&marker));
      return text;
    }

    // Another library runs the plugin in this process.
    bool AnotherLibraryRuns()
    {
      const char* owner = getenv(kOwnerVariable);
      return owner != nullptr && owner[0] != '\0' && OwnAddress() != owner;
    }

    const char* DuplicateName()
    {
      if (duplicateName.empty())
      {
        uint32_t hash = 2166136261u;  // FNV-1a of the path: stable across restarts
        for (const char c : LoadedCopy::Path())
        {
          hash = (hash ^ static_cast<unsigned char>(c)) * 16777619u;
        }
        char text[48];
        snprintf(text, sizeof(text), "ingest-perf-duplicate-%08x", hash);
        duplicateName = text;
      }
      return duplicateName.c_str();
    }
  }


  const char* LoadedCopy::PluginName()
  {
    return (running || AnotherLibraryRuns()) ? DuplicateName() : "ingest-perf";
  }


  bool LoadedCopy::Claim()
  {
    if (running || AnotherLibraryRuns())
    {
      return false;
    }
    // Orthanc loads plugins one by one on its main thread, before it serves anything.
    setenv(kOwnerVariable, OwnAddress().c_str(), 1);
    running = true;
    return true;
  }


  std::string LoadedCopy::Path()
  {
    Dl_info info;
    if (dladdr(static_cast<void*>(&marker), &info) != 0 && info.dli_fname != nullptr)
    {
      return info.dli_fname;
    }
    return "(unknown path)";
  }


  void LoadedCopy::Release()
  {
    if (running)
    {
      const char* owner = getenv(kOwnerVariable);
      if (owner != nullptr && OwnAddress() == owner)
      {
        unsetenv(kOwnerVariable);
      }
      running = false;
    }
  }
}
