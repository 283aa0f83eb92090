// Which copy of the plugin this is. Debian's Orthanc loads every library of its plugin folder, so
// an administrator who also lists the file in "Plugins" loads it twice, and Orthanc refuses to
// start on a second plugin named "ingest-perf": a slow server becomes a down one. So only one
// registration in the process is "ingest-perf"; any other answers "ingest-perf-duplicate-<hash>",
// registers nothing, and says so in the log. Two cases:
//  - the same file twice (the folder and an explicit entry): one library, registered again after
//    it was initialized;
//  - two files: two libraries with separate state, which recognise each other through one abstract
//    UNIX socket name that the running copy binds (no file, no environment variable).
#pragma once

#include <string>

namespace IngestPerf
{
  namespace LoadedCopy
  {
    // The name to give Orthanc for the registration under way.
    const char* PluginName();
    // At OrthancPluginInitialize: true for the one registration that runs the plugin.
    bool Claim();
    // The file this copy was loaded from.
    std::string Path();
    // At OrthancPluginFinalize of the running registration: steps down, so that Orthanc can load
    // the plugin again (POST /tools/reset reloads plugins in the same process).
    void Release();
  }
}
