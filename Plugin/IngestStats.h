// The aggregate: per transport, one histogram per phase, instance sizes, outcome counters and a
// per-second rate window. Fixed memory (about 1 MiB), whatever the number of instances. Every
// write is an atomic operation on this object; there is no lock. Readers take a StatsSnapshot.
#pragma once

#include "IngestCatalogue.h"
#include "PhaseHistogram.h"
#include "RateWindow.h"
#include "StatsSnapshot.h"

#include <array>
#include <atomic>
#include <cstdint>

namespace IngestPerf
{
  struct CompletedInstance;

  class IngestStats
  {
  public:
    IngestStats(int64_t nowNs, int64_t wallNowNs);
    IngestStats(const IngestStats&) = delete;
    IngestStats& operator=(const IngestStats&) = delete;

    // associationGapNs: -1 when not measured
    void RecordStored(const CompletedInstance& instance, int64_t associationGapNs);
    void RecordAlreadyStored(Transport transport);
    void RecordOutcome(Transport transport, Outcome outcome);
    void RecordChangeDispatch(Transport transport, int64_t lagNs);
    void RecordChangeBeforeStored(Transport transport);
    void RecordCallbackError();

    void Reset(int64_t nowNs, int64_t wallNowNs);

    StatsSnapshot Snapshot(int64_t nowNs) const;

  private:
    struct PerTransport
    {
      std::array<PhaseHistogram, kPhaseCount> phases;
      PhaseHistogram receivedBytes;
      PhaseHistogram storedBytes;
      std::array<std::atomic<uint64_t>, kOutcomeCount> outcomes;
      std::atomic<uint64_t> storedWithoutTimeline;
      std::atomic<uint64_t> changesBeforeStored;
      std::atomic<uint64_t> transcodeAttempts;
      std::atomic<int64_t> firstStartNs;
      std::atomic<int64_t> lastStoredNs;
      RateWindow rate;

      void Reset();
    };

    PerTransport& For(Transport transport) { return transports_[static_cast<size_t>(transport)]; }

    std::array<PerTransport, kTransportCount> transports_;
    std::atomic<uint64_t> callbackErrors_;
    std::atomic<int64_t> resetNs_;
    std::atomic<int64_t> resetWallNs_;
  };
}
