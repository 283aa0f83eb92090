// The timed storage area's own statistics: per operation (create, read whole, read range, remove)
// a duration histogram and the bytes moved, for storage MB/s. Lock-free like the rest.
#pragma once

#include "Metrics/Histogram.h"

#include <array>
#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  enum class StorageOperation
  {
    Create,
    ReadWhole,
    ReadRange,
    Remove,
    Count
  };

  constexpr size_t kStorageOperationCount = static_cast<size_t>(StorageOperation::Count);

  const char* StorageOperationName(StorageOperation operation);

  struct StorageOperationSnapshot
  {
    HistogramSnapshot durations;
    uint64_t bytes = 0;
    uint64_t failures = 0;
  };

  class StorageStats
  {
  public:
    StorageStats();

    void Record(StorageOperation operation, int64_t durationNs, uint64_t bytes);
    void RecordFailure(StorageOperation operation);
    void Reset();

    std::array<StorageOperationSnapshot, kStorageOperationCount> Snapshot() const;

  private:
    struct Operation
    {
      Histogram durations;
      std::atomic<uint64_t> bytes;
      std::atomic<uint64_t> failures;
    };

    std::array<Operation, kStorageOperationCount> operations_;
  };
}
