#include "Correlation/StorageCondition.h"

#include <sys/statvfs.h>


namespace IngestPerf
{
  StorageState StorageCondition::Assess(const StorageLimits& limits)
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
    if (state != StorageState::DiskFull && limited)
    {
      state = StorageState::QuotaPossible;
    }
    Set(state);
    return state;
  }
}
