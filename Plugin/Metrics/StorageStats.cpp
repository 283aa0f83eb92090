#include "Metrics/StorageStats.h"

namespace IngestPerf
{
  const char* StorageOperationName(StorageOperation operation)
  {
    static const char* const kNames[kStorageOperationCount] = {"create", "readWhole", "readRange", "remove"};
    return kNames[static_cast<size_t>(operation)];
  }


  StorageStats::StorageStats()
  {
    Reset();
  }


  void StorageStats::Record(StorageOperation operation, int64_t durationNs, uint64_t bytes)
  {
    Operation& target = operations_[static_cast<size_t>(operation)];
    target.durations.Record(durationNs);
    target.bytes.fetch_add(bytes, std::memory_order_relaxed);
  }


  void StorageStats::RecordFailure(StorageOperation operation)
  {
    operations_[static_cast<size_t>(operation)].failures.fetch_add(1, std::memory_order_relaxed);
  }


  void StorageStats::Reset()
  {
    for (Operation& operation : operations_)
    {
      operation.durations.Reset();
      operation.bytes.store(0, std::memory_order_relaxed);
      operation.failures.store(0, std::memory_order_relaxed);
    }
  }


  std::array<StorageOperationSnapshot, kStorageOperationCount> StorageStats::Snapshot() const
  {
    std::array<StorageOperationSnapshot, kStorageOperationCount> result;
    for (size_t i = 0; i < kStorageOperationCount; i++)
    {
      result[i].durations = operations_[i].durations.Snapshot();
      result[i].bytes = operations_[i].bytes.load(std::memory_order_relaxed);
      result[i].failures = operations_[i].failures.load(std::memory_order_relaxed);
    }
    return result;
  }
}
