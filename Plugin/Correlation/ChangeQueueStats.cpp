#include "Correlation/ChangeQueueStats.h"

namespace IngestPerf
{
  namespace
  {
    // The values of OrthancPluginChangeType, which this file does not need to include.
    enum : uint32_t
    {
      kNewInstance = 3,
      kNewPatient = 4,
      kNewSeries = 5,
      kNewStudy = 6
    };
  }


  const char* ChangeTypeName(uint32_t changeType)
  {
    static const char* const kNames[kChangeTypeCount] = {
      "CompletedSeries",   "Deleted",        "NewChildInstance",  "NewInstance",     "NewPatient",
      "NewSeries",         "NewStudy",       "StablePatient",     "StableSeries",    "StableStudy",
      "OrthancStarted",    "OrthancStopped", "UpdatedAttachment", "UpdatedMetadata", "UpdatedPeers",
      "UpdatedModalities", "JobSubmitted",   "JobSuccess",        "JobFailure"};
    return changeType < kChangeTypeCount ? kNames[changeType] : "other";
  }


  ChangeQueueStats::ChangeQueueStats() :
    lastNewInstanceDeliveryNs_(0),
    lastNewInstanceStoredNs_(0)
  {
    storedInstances_.store(0, std::memory_order_relaxed);
    newInstancesDelivered_.store(0, std::memory_order_relaxed);
    newInstancesAccounted_.store(0, std::memory_order_relaxed);
    latestStoredNs_.store(0, std::memory_order_relaxed);
    ResetStatistics();
  }


  void ChangeQueueStats::InstanceStored(int64_t storedNs)
  {
    // Its time first, then the count: a change thread that reads the count without this instance
    // reads a time that is not this instance's, or one before it (ChangeDelivered).
    latestStoredNs_.store(storedNs, std::memory_order_seq_cst);
    storedInstances_.fetch_add(1, std::memory_order_seq_cst);
  }


  void ChangeQueueStats::ChangeDelivered(uint32_t changeType, int64_t nowNs, int64_t pairedStoredNs)
  {
    if (changeType < kChangeTypeCount)
    {
      delivered_[changeType].fetch_add(1, std::memory_order_relaxed);
    }
    else
    {
      otherTypes_.fetch_add(1, std::memory_order_relaxed);
    }

    switch (changeType)
    {
      case kNewInstance:
      {
        // Others waited while the previous instance's changes went through every listener.
        const uint64_t stored = storedInstances_.load(std::memory_order_relaxed);
        const uint64_t deliveredBefore = newInstancesAccounted_.load(std::memory_order_relaxed);
        if (lastNewInstanceDeliveryNs_ != 0 && stored > deliveredBefore + 1)
        {
          perInstanceWhileBacklogged_.Record(nowNs - lastNewInstanceDeliveryNs_);
        }
        lastNewInstanceDeliveryNs_ = nowNs;
        newInstancesDelivered_.fetch_add(1, std::memory_order_relaxed);
        const uint64_t storedNow = storedInstances_.load(std::memory_order_seq_cst);
        if (pairedStoredNs != 0 && pairedStoredNs == latestStoredNs_.load(std::memory_order_seq_cst))
        {
          // The change of the latest stored instance: those stored before it were delivered before it.
          newInstancesAccounted_.store(storedNow, std::memory_order_release);
        }
        else
        {
          newInstancesAccounted_.fetch_add(1, std::memory_order_release);
        }
        lastNewInstanceStoredNs_ = pairedStoredNs;
        break;
      }
      // Queued in the same transaction, right after the NewInstance of the series' first
      // instance: they waited since that instance's commit, which OnStored follows closely.
      case kNewSeries:
      case kNewStudy:
      case kNewPatient:
        if (lastNewInstanceStoredNs_ != 0 && nowNs >= lastNewInstanceStoredNs_)
        {
          Histogram& target = changeType == kNewSeries  ? newSeriesLag_
                              : changeType == kNewStudy ? newStudyLag_
                                                        : newPatientLag_;
          target.Record(nowNs - lastNewInstanceStoredNs_);
        }
        else
        {
          followedEarlyNewInstance_.fetch_add(1, std::memory_order_relaxed);
        }
        break;
      default:
        lastNewInstanceStoredNs_ = 0;
        break;
    }
  }


  void ChangeQueueStats::ResetStatistics()
  {
    // The changes delivered count from the reset, as every figure; the backlog's two counters do not
    // (it is what is waiting now, whenever it was stored).
    for (auto& count : delivered_)
    {
      count.store(0, std::memory_order_relaxed);
    }
    otherTypes_.store(0, std::memory_order_relaxed);
    newSeriesLag_.Reset();
    newStudyLag_.Reset();
    newPatientLag_.Reset();
    perInstanceWhileBacklogged_.Reset();
    followedEarlyNewInstance_.store(0, std::memory_order_relaxed);
  }


  ChangeQueueSnapshot ChangeQueueStats::Snapshot() const
  {
    ChangeQueueSnapshot snapshot;
    for (size_t i = 0; i < kChangeTypeCount; i++)
    {
      snapshot.delivered[i] = delivered_[i].load(std::memory_order_relaxed);
    }
    snapshot.otherTypes = otherTypes_.load(std::memory_order_relaxed);
    // Delivered first, then stored: a concurrent store can only make the backlog look larger,
    // never negative.
    snapshot.newInstancesDelivered = newInstancesDelivered_.load(std::memory_order_acquire);
    snapshot.newInstancesAccounted = newInstancesAccounted_.load(std::memory_order_acquire);
    snapshot.storedInstances = storedInstances_.load(std::memory_order_acquire);
    snapshot.newSeriesLag = newSeriesLag_.Snapshot();
    snapshot.newStudyLag = newStudyLag_.Snapshot();
    snapshot.newPatientLag = newPatientLag_.Snapshot();
    snapshot.perInstanceWhileBacklogged = perInstanceWhileBacklogged_.Snapshot();
    snapshot.followedEarlyNewInstance = followedEarlyNewInstance_.load(std::memory_order_relaxed);
    return snapshot;
  }
}
