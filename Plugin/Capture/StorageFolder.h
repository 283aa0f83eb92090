// Attachments as files in Orthanc's own storage layout: <root>/<uuid[0..2]>/<uuid[2..4]>/<uuid>.
// The timed storage area stores through it, so that switching the option on or off moves no file
// and Orthanc's own storage reads what the plugin wrote (and the other way round). Plain POSIX and
// std::filesystem: nothing of Orthanc's framework is loaded into Orthanc.
#pragma once

#include <orthanc/OrthancCPlugin.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace IngestPerf
{
  // A failed operation, with the error Orthanc's own storage would report for it.
  class StorageFolderError : public std::runtime_error
  {
  public:
    StorageFolderError(OrthancPluginErrorCode code, const std::string& what) :
      std::runtime_error(what),
      code(code)
    {
    }
    OrthancPluginErrorCode code;
  };

  class StorageFolder
  {
  public:
    // Creates the root folder if needed; throws StorageFolderError if it cannot.
    StorageFolder(const std::string& root, bool fsyncOnWrite);

    // Throws StorageFolderError(ParameterOutOfRange) for anything but a 36-character UUID, so that
    // no identifier can name a path outside the root.
    std::string PathOf(const std::string& uuid) const;

    // Fails if the file exists (a UUID is never reused), as Orthanc does.
    void Create(const std::string& uuid, const void* content, size_t size) const;
    uint64_t Size(const std::string& uuid) const;
    // Reads exactly `size` bytes from `start`; BadRange if the file is shorter.
    void Read(const std::string& uuid, uint64_t start, void* target, size_t size) const;
    // Removes the file, then its two parent folders if they became empty; never fails.
    void Remove(const std::string& uuid) const;

  private:
    std::string root_;
    bool fsyncOnWrite_;
  };
}
