#include "Capture/StorageFolder.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <system_error>
#include <unistd.h>

namespace IngestPerf
{
  namespace
  {
    namespace fs = std::filesystem;

    bool IsUuid(const std::string& value)
    {
      if (value.size() != 36)
      {
        return false;
      }
      for (size_t i = 0; i < value.size(); i++)
      {
        const char c = value[i];
        const bool dash = (i == 8 || i == 13 || i == 18 || i == 23);
        if (dash ? c != '-' : !isxdigit(static_cast<unsigned char>(c)))
        {
          return false;
        }
      }
      return true;
    }

    std::string Describe(const char* action, const std::string& path, int error)
    {
      return std::string(action) + " " + path + ": " + strerror(error);
    }

    // Closes the descriptor on every path.
    class File
    {
    public:
      explicit File(int fd) :
        fd_(fd)
      {
      }
      ~File()
      {
        if (fd_ >= 0)
        {
          close(fd_);
        }
      }
      File(const File&) = delete;
      File& operator=(const File&) = delete;
      int Get() const { return fd_; }
      // Closes now, reporting the error a deferred write may only show at close.
      int Close()
      {
        const int result = close(fd_);
        fd_ = -1;
        return result;
      }

    private:
      int fd_;
    };

    File OpenForReading(const std::string& path)
    {
      const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0)
      {
        throw StorageFolderError(errno == ENOENT ? OrthancPluginErrorCode_InexistentFile
                                                 : OrthancPluginErrorCode_FileStorageCannotWrite,
                                 Describe("cannot open", path, errno));
      }
      return File(fd);
    }
  }


  StorageFolder::StorageFolder(const std::string& root, bool fsyncOnWrite) :
    root_(root),
    fsyncOnWrite_(fsyncOnWrite)
  {
    std::error_code error;
    fs::create_directories(root_, error);
    if (error || !fs::is_directory(root_))
    {
      throw StorageFolderError(OrthancPluginErrorCode_DirectoryOverFile,
                               "cannot create the folder " + root_ + (error ? ": " + error.message() : ""));
    }
  }


  std::string StorageFolder::PathOf(const std::string& uuid) const
  {
    if (!IsUuid(uuid))
    {
      throw StorageFolderError(OrthancPluginErrorCode_ParameterOutOfRange, "not an attachment UUID: " + uuid);
    }
    return root_ + "/" + uuid.substr(0, 2) + "/" + uuid.substr(2, 2) + "/" + uuid;
  }


  void StorageFolder::Create(const std::string& uuid, const void* content, size_t size) const
  {
    const std::string path = PathOf(uuid);
    const fs::path parent = fs::path(path).parent_path();
    std::error_code error;
    fs::create_directories(parent, error);  // another thread may create it at the same time: fine
    if (!fs::is_directory(parent))
    {
      throw StorageFolderError(OrthancPluginErrorCode_FileStorageCannotWrite,
                               "cannot create the folder " + parent.string() + ": " + error.message());
    }

    File file(open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666));
    if (file.Get() < 0)
    {
      throw StorageFolderError(errno == EEXIST ? OrthancPluginErrorCode_InternalError
                                               : OrthancPluginErrorCode_FileStorageCannotWrite,
                               Describe("cannot create", path, errno));
    }
    const char* cursor = static_cast<const char*>(content);
    size_t left = size;
    while (left > 0)
    {
      const ssize_t written = write(file.Get(), cursor, left);
      if (written < 0 && errno == EINTR)
      {
        continue;
      }
      if (written <= 0)
      {
        const int cause = errno;
        unlink(path.c_str());  // no truncated attachment left behind
        throw StorageFolderError(OrthancPluginErrorCode_FileStorageCannotWrite, Describe("cannot write", path, cause));
      }
      cursor += written;
      left -= static_cast<size_t>(written);
    }
    if ((fsyncOnWrite_ && fsync(file.Get()) != 0) || file.Close() != 0)
    {
      const int cause = errno;
      unlink(path.c_str());
      throw StorageFolderError(OrthancPluginErrorCode_FileStorageCannotWrite, Describe("cannot sync", path, cause));
    }
  }


  uint64_t StorageFolder::Size(const std::string& uuid) const
  {
    // Not stat(): since glibc 2.33 it is a symbol of its own, and the plugin must load on 2.32.
    const std::string path = PathOf(uuid);
    std::error_code error;
    const uintmax_t size = fs::file_size(path, error);
    if (error)
    {
      throw StorageFolderError(error == std::errc::no_such_file_or_directory
                                 ? OrthancPluginErrorCode_InexistentFile
                                 : OrthancPluginErrorCode_FileStorageCannotWrite,
                               "cannot read the size of " + path + ": " + error.message());
    }
    return static_cast<uint64_t>(size);
  }


  void StorageFolder::Read(const std::string& uuid, uint64_t start, void* target, size_t size) const
  {
    const std::string path = PathOf(uuid);
    File file = OpenForReading(path);
    char* cursor = static_cast<char*>(target);
    size_t left = size;
    off_t offset = static_cast<off_t>(start);
    while (left > 0)
    {
      const ssize_t got = pread(file.Get(), cursor, left, offset);
      if (got < 0 && errno == EINTR)
      {
        continue;
      }
      if (got < 0)
      {
        throw StorageFolderError(OrthancPluginErrorCode_FileStorageCannotWrite, Describe("cannot read", path, errno));
      }
      if (got == 0)
      {
        throw StorageFolderError(OrthancPluginErrorCode_BadRange, "range beyond the end of " + path);
      }
      cursor += got;
      offset += got;
      left -= static_cast<size_t>(got);
    }
  }


  void StorageFolder::Remove(const std::string& uuid) const
  {
    const fs::path path(PathOf(uuid));
    std::error_code ignored;
    fs::remove(path, ignored);
    // remove() of a folder fails while it holds files: exactly the folders that must stay.
    fs::remove(path.parent_path(), ignored);
    fs::remove(path.parent_path().parent_path(), ignored);
  }
}
