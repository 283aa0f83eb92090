// Whether Orthanc's storage could take another instance, as far as the plugin can see: the free
// space of the storage folder's file system, and whether Orthanc has limits of its own
// (MaximumStorageSize, MaximumPatientCount). How close Orthanc is to them is its index's to say, and
// the plugin does not ask Orthanc's REST API: with limits set and space left, a store that failed
// after the filters is the quota or the index, not told apart. Read by the plugin's own thread while
// Orthanc ingests (Assess), kept in one atomic that the recorder reads when it names why a store
// failed (Now): the ingest path never waits for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace IngestPerf
{
  enum class StorageState : uint8_t
  {
    Unknown,  // not assessed yet, or not assessable (a storage plugin owns the storage area)
    Ok,
    DiskFull,
    QuotaPossible  // space left, and Orthanc has a MaximumStorageSize or MaximumPatientCount
  };

  struct StorageLimits
  {
    std::string folder;                // Orthanc's StorageDirectory; "" when a plugin owns the storage area
    uint64_t maximumStorageBytes = 0;  // 0: no limit
    uint64_t maximumPatientCount = 0;
  };

  class StorageCondition
  {
  public:
    // A file system with less free space than this is full for the diagnosis: Orthanc writes whole
    // instances, and the next one may not fit.
    static constexpr uint64_t kFullBelowBytes = 16ull * 1024 * 1024;

    StorageState Now() const { return static_cast<StorageState>(state_.load(std::memory_order_relaxed)); }

    // Reads the free space (statvfs); stores and returns the state.
    StorageState Assess(const StorageLimits& limits);
    void Set(StorageState state) { state_.store(static_cast<uint8_t>(state), std::memory_order_relaxed); }

  private:
    std::atomic<uint8_t> state_{static_cast<uint8_t>(StorageState::Unknown)};
  };
}
