#include "Capture/TimedStorageArea.h"

#include "Capture/IngestHooks.h"
#include "Capture/StorageFolder.h"
#include "Capture/StorageRoot.h"
#include "Platform/MonotonicClock.h"
#include "Platform/OrthancSdk.h"
#include "Recording/IngestState.h"

#include <filesystem>
#include <memory>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    std::unique_ptr<StorageFolder> storage;
    bool storeDicom = true;

    bool Skipped(OrthancPluginContentType type)
    {
      // "StoreDicom": false keeps the index and the JSON, never the DICOM file (as Orthanc does).
      return type == OrthancPluginContentType_Dicom && !storeDicom;
    }

    void Failed(StorageOperation kind)
    {
      ActiveIngestState()->storage.RecordFailure(kind);
      if (kind == StorageOperation::Create)
      {
        ActiveIngestState()->timelines.ForCurrentThread().StorageCreateFailed();  // the instance's store fails
      }
    }

    // Runs a storage operation, times it, and turns exceptions into the error Orthanc expects.
    template <typename Operation>
    OrthancPluginErrorCode Timed(StorageOperation kind, uint64_t& bytes, Operation operation)
    {
      const bool create = kind == StorageOperation::Create;
      // Only the writes and removals of an ingest concern a timeline (reads may be on any thread).
      InstanceTimeline* timeline =
        (create || kind == StorageOperation::Remove) ? &ActiveIngestState()->timelines.ForCurrentThread() : nullptr;
      const int64_t start = MonotonicNowNs();
      const ThreadClockReading startClocks =
        create ? ClocksIfDue(*timeline, TimelineEvent::StorageCreate) : ThreadClockReading();
      try
      {
        operation();
      }
      catch (const StorageFolderError& e)
      {
        Failed(kind);
        return e.code;
      }
      catch (...)
      {
        Failed(kind);
        return OrthancPluginErrorCode_StorageAreaPlugin;
      }
      const int64_t end = MonotonicNowNs();
      const ThreadClockReading endClocks =
        startClocks.HasCpu() ? ClocksIfDue(*timeline, TimelineEvent::StorageCreate) : ThreadClockReading();
      ActiveIngestState()->storage.Record(kind, end - start, bytes);
      if (create)
      {
        timeline->StorageCreated(start, end, startClocks, endClocks);
      }
      else if (kind == StorageOperation::Remove)
      {
        timeline->StorageRemoved();
      }
      return OrthancPluginErrorCode_Success;
    }

    OrthancPluginErrorCode Create(const char* uuid, const void* content, int64_t size, OrthancPluginContentType type)
    {
      uint64_t bytes = static_cast<uint64_t>(size);
      return Timed(StorageOperation::Create, bytes, [&] {
        if (!Skipped(type))
        {
          storage->Create(uuid, content, static_cast<size_t>(size));
        }
      });
    }

    OrthancPluginErrorCode ReadWhole(OrthancPluginMemoryBuffer64* target, const char* uuid,
                                     OrthancPluginContentType type)
    {
      uint64_t bytes = 0;
      return Timed(StorageOperation::ReadWhole, bytes, [&] {
        if (Skipped(type))
        {
          throw StorageFolderError(OrthancPluginErrorCode_UnknownResource, "StoreDicom is false");
        }
        bytes = storage->Size(uuid);
        if (OrthancPluginCreateMemoryBuffer64(OrthancSdk::Context(), target, bytes) != OrthancPluginErrorCode_Success)
        {
          throw StorageFolderError(OrthancPluginErrorCode_NotEnoughMemory, "no memory for the attachment");
        }
        try
        {
          storage->Read(uuid, 0, target->data, bytes);
        }
        catch (...)
        {
          // Orthanc takes the buffer on success only; clear it so that no caller frees it twice.
          OrthancPluginFreeMemoryBuffer64(OrthancSdk::Context(), target);
          target->data = nullptr;
          target->size = 0;
          throw;
        }
      });
    }

    OrthancPluginErrorCode ReadRange(OrthancPluginMemoryBuffer64* target, const char* uuid,
                                     OrthancPluginContentType type, uint64_t rangeStart)
    {
      uint64_t bytes = target->size;  // Orthanc allocated the target: fill exactly that much
      return Timed(StorageOperation::ReadRange, bytes, [&] {
        if (Skipped(type))
        {
          throw StorageFolderError(OrthancPluginErrorCode_UnknownResource, "StoreDicom is false");
        }
        storage->Read(uuid, rangeStart, target->data, bytes);
      });
    }

    OrthancPluginErrorCode Remove(const char* uuid, OrthancPluginContentType type)
    {
      uint64_t bytes = 0;
      return Timed(StorageOperation::Remove, bytes, [&] {
        if (!Skipped(type))
        {
          storage->Remove(uuid);
        }
      });
    }

    // The configuration path Orthanc was started with: its first argument that is not an option.
  }


  StorageAreaState RegisterTimedStorageArea(const Configuration& configuration)
  {
    StorageAreaState state;
    state.requested = configuration.timedStorage;
    if (!configuration.timedStorage)
    {
      state.reason = "IngestPerf.TimedStorage is false: Orthanc's own storage is used, and untimed";
      return state;
    }
    if (!configuration.storagePluginSection.empty())
    {
      state.reason = "the configuration enables another storage plugin (" + configuration.storagePluginSection +
                     "): Orthanc accepts one storage area only, this plugin leaves it to that plugin";
      state.heldByAnotherPlugin = true;
      return state;
    }

    state.root = ResolveStorageRoot(OrthancSdk::ConfigurationArgument(), configuration.storageDirectory,
                                    std::filesystem::current_path().string(),
                                    [](const std::string& path) { return std::filesystem::is_directory(path); });
    try
    {
      storage.reset(new StorageFolder(state.root, configuration.syncStorageArea));
    }
    catch (const std::exception& e)
    {
      state.reason = std::string("cannot open the storage folder ") + state.root + ": " + e.what();
      return state;
    }
    storeDicom = configuration.storeDicom;

    // Refused when another plugin registered a storage area first.
    const OrthancPluginErrorCode code = OrthancSdk::RegisterStorageArea(Create, ReadWhole, ReadRange, Remove);
    if (code != OrthancPluginErrorCode_Success)
    {
      state.reason = std::string("Orthanc refused the storage area (") + OrthancSdk::ErrorDescription(code) +
                     "): a plugin loaded earlier holds it";
      state.heldByAnotherPlugin = true;
      storage.reset();
      return state;
    }
    state.active = true;
    return state;
  }
}
