#include "Correlation/StorageCondition.h"

#include <sys/statvfs.h>

#include <algorithm>

namespace IngestPerf
{
  StorageState StorageCondition::Assess(const StorageLimits& limits, const std::function<bool(StorageUsage&)>& usage,
                                        uint64_t instanceBytes)
  {
    StorageState state = StorageState::Unknown;
    if (!limits.folder.empty())
    {
      struct statvfs fs;
      if (statvfs(limits.folder.c_str(), &fs) == 0)
      {
        // f_bavail: what an unprivileged Orthanc (Debian's service runs as "orthanc") may still use.
        const uint64_t available = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
        state = available < kFullBelowBytes ? StorageState::DiskFull : StorageState::Ok;
      }
    }
    const bool limited = limits.maximumStorageBytes != 0 || limits.maximumPatientCount != 0;
    if (state != StorageState::DiskFull && limited && !usage && Now() == StorageState::QuotaReached)
    {
      state = StorageState::QuotaReached;  // not asked again this time: the last answer stands
    }
    else if (state != StorageState::DiskFull && limited && usage)
    {
      StorageUsage used;
      if (usage(used))
      {
        // Less room left than an instance takes (1% of the limit at least): the next one may not fit,
        // and Orthanc refuses it when it cannot recycle (protected patients, or the instance's own
        // patient is the oldest).
        const uint64_t margin = std::max(instanceBytes, limits.maximumStorageBytes / 100);
        const bool full = (limits.maximumStorageBytes != 0 && used.bytes + margin > limits.maximumStorageBytes) ||
                          (limits.maximumPatientCount != 0 && used.patients >= limits.maximumPatientCount);
        state = full ? StorageState::QuotaReached : (state == StorageState::Unknown ? StorageState::Ok : state);
      }
    }
    Set(state);
    return state;
  }
}
