// Whether Orthanc's storage could take another instance, as far as the plugin can see: the free
// space of the storage folder's file system, and Orthanc's own limits (MaximumStorageSize,
// MaximumPatientCount) against what its index holds. Read by the plugin's own thread while Orthanc
// ingests and there are stores that failed after the filters (Assess), kept in one atomic that
// the recorder reads when it names why a store failed (Now): the ingest path never waits for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace IngestPerf
{
  enum class StorageState : uint8_t
  {
    Unknown,  // not assessed yet, or not assessable (a storage plugin owns the storage area)
    Ok,
    DiskFull,
    QuotaReached
  };

  struct StorageLimits
  {
    std::string folder;                // Orthanc's StorageDirectory; "" when a plugin owns the storage area
    uint64_t maximumStorageBytes = 0;  // 0: no limit
    uint64_t maximumPatientCount = 0;
  };

  // What Orthanc's index holds (GET /statistics): total size and patients; false when unknown.
  struct StorageUsage
  {
    uint64_t bytes = 0;
    uint64_t patients = 0;
  };

  class StorageCondition
  {
  public:
    // A file system with less free space than this is full for the diagnosis: Orthanc writes whole
    // instances, and the next one may not fit.
    static constexpr uint64_t kFullBelowBytes = 16ull * 1024 * 1024;

    StorageState Now() const { return static_cast<StorageState>(state_.load(std::memory_order_relaxed)); }

    // Reads the free space (statvfs) and, when a limit is configured and `usage` is given, asks it
    // what the index holds (without it, a quota found reached earlier stands); stores and returns
    // the state. The quota is reached when less than `instanceBytes` is left under it (Orthanc
    // refuses an instance that would go past it and that it cannot recycle room for).
    StorageState Assess(const StorageLimits& limits, const std::function<bool(StorageUsage&)>& usage,
                        uint64_t instanceBytes = 0);
    void Set(StorageState state) { state_.store(static_cast<uint8_t>(state), std::memory_order_relaxed); }

  private:
    std::atomic<uint8_t> state_{static_cast<uint8_t>(StorageState::Unknown)};
  };
}
