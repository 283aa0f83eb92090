#include "Host/LoadedCopy.h"

#include "Platform/Hash.h"

#include <link.h>

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
        // From the path: stable across restarts.
        const std::string path = LoadedCopy::Path();
        const uint32_t hash = static_cast<uint32_t>(Fnv1a(path.data(), path.size()));
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
    // dl_iterate_phdr rather than dladdr, which needs glibc 2.34: the object whose loaded segments
    // hold `marker`.
    struct Search
    {
      uintptr_t address;
      std::string path;
    } search{reinterpret_cast<uintptr_t>(&marker), ""};
    dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* data) -> int {
        Search& wanted = *static_cast<Search*>(data);
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          const uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD && wanted.address >= start && wanted.address < start + segment.p_memsz)
          {
            wanted.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
            return 1;
          }
        }
        return 0;
      },
      &search);
    return search.path.empty() ? "(unknown path)" : search.path;
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
