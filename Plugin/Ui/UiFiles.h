// The files of the page GET /perf/ui/ serves, embedded in the plugin at build time: the CMake step
// of Resources/EmbedFiles.cmake turns every file of Resources/ui/ into a generated source, so the
// page needs nothing at run time but the plugin (no CDN: it works on a network without Internet).
// Lookup by path and the Content-Type of each; knows nothing of Orthanc.
#pragma once

#include <cstddef>
#include <string>

namespace IngestPerf
{
  struct UiFile
  {
    const char* path;  // relative to Resources/ui/, '/'-separated: "index.html", "vendor/..."
    const unsigned char* data;
    size_t size;
  };

  // Generated at build time (EmbeddedUiFiles.cpp in the build folder), sorted by path.
  extern const UiFile kEmbeddedUiFiles[];
  extern const size_t kEmbeddedUiFileCount;

  // The file at `path` (as in kEmbeddedUiFiles), null for any other path.
  const UiFile* FindUiFile(const std::string& path);

  // By the file name's extension; "application/octet-stream" for an unknown one.
  const char* UiContentType(const std::string& path);

  // The script Orthanc Explorer runs (OrthancPluginExtendOrthancExplorer): a button on its home
  // page that opens the page, by a URL relative to Orthanc Explorer's own.
  const char* OrthancExplorerLinkScript();
}
