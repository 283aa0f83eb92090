#include "Host/LoadedCopy.h"

#include "Platform/Hash.h"

#include <link.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace IngestPerf
{
  namespace
  {
    int marker;            // its address differs between libraries
    bool running = false;  // this library runs the plugin (it was claimed)
    int ownerSocket = -1;  // the running copy's mark, held while it runs
    std::string duplicateName;

    // Binds the mark: an abstract UNIX socket name of this process (its PID namespace and PID, so
    // that two Orthancs sharing a network namespace have two), which no file, environment or other
    // library sees, and which goes with its descriptor. -1 when another copy holds it, or when the
    // system refuses sockets (then no copy can tell, and each runs as if alone).
    int BindMark(bool& taken)
    {
      taken = false;
      char namespaceLink[64] = {0};
      const ssize_t length = readlink("/proc/self/ns/pid", namespaceLink, sizeof(namespaceLink) - 1);
      sockaddr_un address{};
      address.sun_family = AF_UNIX;
      const int written = snprintf(address.sun_path + 1, sizeof(address.sun_path) - 1, "orthanc-ingest-perf/%s/%d",
                                   length > 0 ? namespaceLink : "-", static_cast<int>(getpid()));
      const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0 || written <= 0)
      {
        if (fd >= 0)
        {
          close(fd);
        }
        return -1;
      }
      const socklen_t size =
        static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 +
                               std::min<size_t>(static_cast<size_t>(written), sizeof(address.sun_path) - 1));
      if (bind(fd, reinterpret_cast<const sockaddr*>(&address), size) != 0)
      {
        taken = errno == EADDRINUSE;
        close(fd);
        return -1;
      }
      return fd;
    }

    // Another library runs the plugin in this process.
    bool AnotherLibraryRuns()
    {
      if (running)
      {
        return false;
      }
      bool taken = false;
      const int fd = BindMark(taken);
      if (fd >= 0)
      {
        close(fd);
      }
      return taken;
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
    bool taken = false;
    ownerSocket = BindMark(taken);
    if (taken)
    {
      return false;
    }
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
      if (ownerSocket >= 0)
      {
        close(ownerSocket);
        ownerSocket = -1;
      }
      running = false;
    }
  }
}
