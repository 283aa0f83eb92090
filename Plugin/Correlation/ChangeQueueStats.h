// Orthanc's change queue, seen from OnChange on its single "CHANGES" thread: how many changes of
// each type were delivered, how far behind the NewInstance changes are (stored instances whose
// NewInstance has not been delivered yet), how long NewSeries/NewStudy/NewPatient waited, and the
// interval between two NewInstance deliveries while NewInstance changes were waiting (the change
// thread's time per ingested instance, its NewInstance, NewChildInstance... through every listener:
// a slow OnChange consumer shows here, and delays every plugin).
#pragma once

#include "Metrics/Histogram.h"

#include <array>
#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  constexpr size_t kChangeTypeCount = 19;  // OrthancPluginChangeType 0..18 in the 1.10.1 SDK

  const char* ChangeTypeName(uint32_t changeType);

  struct ChangeQueueSnapshot
  {
    std::array<uint64_t, kChangeTypeCount> delivered{};
    uint64_t otherTypes = 0;
    uint64_t storedInstances = 0;
    uint64_t newInstancesDelivered = 0;  // NewInstance changes delivered since start
    // The NewInstance changes the backlog counts as delivered: those delivered, except that
    // delivering the change of the latest stored instance accounts for every earlier one (Orthanc's
    // queue is first in, first out), so a miscounted instance never raises the backlog for good.
    uint64_t newInstancesAccounted = 0;
    HistogramSnapshot newSeriesLag;
    HistogramSnapshot newStudyLag;
    HistogramSnapshot newPatientLag;
    HistogramSnapshot perInstanceWhileBacklogged;
    // NewSeries/NewStudy/NewPatient that followed a NewInstance delivered before its OnStored:
    // their wait is shorter than Orthanc's OnStored step, and not timed.
    uint64_t followedEarlyNewInstance = 0;

    // NewInstance changes queued behind: stored instances whose change was not delivered yet.
    uint64_t NewInstanceBacklog() const
    {
      return storedInstances > newInstancesAccounted ? storedInstances - newInstancesAccounted : 0;
    }
  };

  class ChangeQueueStats
  {
  public:
    ChangeQueueStats();

    // On the ingesting thread, for every new instance (its NewInstance change is already queued),
    // at its OnStored time.
    void InstanceStored(int64_t storedNs);

    // On the change thread, for every change. `pairedStoredNs`: for a NewInstance change, the
    // OnStored time of its instance if known (0 otherwise).
    void ChangeDelivered(uint32_t changeType, int64_t nowNs, int64_t pairedStoredNs);

    void ResetStatistics();  // keeps the two counters the backlog is computed from (since start)

    ChangeQueueSnapshot Snapshot() const;

  private:
    std::array<std::atomic<uint64_t>, kChangeTypeCount> delivered_;
    std::atomic<uint64_t> otherTypes_;
    std::atomic<uint64_t> storedInstances_;
    std::atomic<uint64_t> newInstancesDelivered_;
    std::atomic<uint64_t> newInstancesAccounted_;
    std::atomic<int64_t> latestStoredNs_;  // the OnStored time of the latest InstanceStored
    Histogram newSeriesLag_;
    Histogram newStudyLag_;
    Histogram newPatientLag_;
    Histogram perInstanceWhileBacklogged_;
    std::atomic<uint64_t> followedEarlyNewInstance_;
    // Change thread only.
    int64_t lastNewInstanceDeliveryNs_;
    int64_t lastNewInstanceStoredNs_;
  };
}
