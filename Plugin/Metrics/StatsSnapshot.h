// A consistent-enough, plain copy of the aggregate, made by a reader. Everything the exporters
// need and nothing they could use to reach back into the hot path.
#pragma once

#include "Metrics/IngestVocabulary.h"
#include "Metrics/Histogram.h"

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace IngestPerf
{
  struct TransportSnapshot
  {
    std::array<HistogramSnapshot, kPhaseCount> phases;
    HistogramSnapshot receivedBytes;
    HistogramSnapshot storedBytes;
    std::array<uint64_t, kOutcomeCount> outcomes{};
    uint64_t storedWithoutTimeline = 0;
    uint64_t changesBeforeStored = 0;
    uint64_t transcodeAttempts = 0;
    uint64_t transcodedWithoutHook = 0;
    uint64_t answersAcceptingCompression = 0;
    uint64_t answersWithoutCompression = 0;
    int64_t firstStartNs = 0;  // 0 when nothing was stored since the reset
    int64_t lastStoredNs = 0;
    uint64_t last10sInstances = 0;
    uint64_t last10sBytes = 0;
    uint64_t last60sInstances = 0;
    uint64_t last60sBytes = 0;

    void Merge(const TransportSnapshot& other);

    // From the first instance's start to the last OnStored since the reset; 0 if none.
    int64_t ActiveSpanNs() const;
  };

  // The labelled series a query matched, merged per transport and per value of one label.
  struct GroupedSnapshot
  {
    size_t seriesMatched = 0;
    std::array<TransportSnapshot, kTransportCount> transports;
    std::vector<std::pair<uint8_t, TransportSnapshot>> groups;  // label id -> merged series
  };

  struct StatsSnapshot
  {
    std::array<TransportSnapshot, kTransportCount> transports;
    uint64_t callbackErrors = 0;
    int64_t takenNs = 0;
    int64_t resetNs = 0;
    int64_t resetWallNs = 0;

    TransportSnapshot AllTransports() const;
  };
}
