// The figures the diagnosis rules read, gathered from one report: per transport (over the query's
// window, or since the reset), the phases in milliseconds, outcomes and counters; and what the
// host is configured to do and holds right now (worker pools, open connections, change backlog).
// Plain numbers, so that the rules can be tested on any situation without an Orthanc.
#pragma once

#include "Correlation/IngestWatcher.h"
#include "Host/Configuration.h"
#include "Metrics/StatsQuery.h"
#include "Recording/IngestReport.h"
#include "Vocabulary/IngestVocabulary.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace IngestPerf
{
  struct PhaseFigures
  {
    uint64_t count = 0;
    double sumMs = 0;
    double meanMs = 0;
    double p50Ms = 0;
    double p90Ms = 0;
    double p99Ms = 0;
    double maxMs = 0;
  };

  PhaseFigures FiguresOf(const HistogramSnapshot& durations);

  struct TransportFigures
  {
    uint64_t stored = 0;
    std::array<uint64_t, kOutcomeCount> outcomes{};
    std::array<uint64_t, kFailureReasonCount> failures{};  // the failed instances by reason
    std::array<PhaseFigures, kPhaseCount> phases;
    // associationGap samples from 38 to 60 ms: the delayed-ACK timer (40 ms on Linux) plus the few
    // milliseconds of the dataset's transfer and the client's own work; and from 78 to 100 ms: two
    // of them, Orthanc's answer and a small dataset of a sender without TCP_NODELAY either.
    uint64_t gapsNearDelayedAck = 0;
    uint64_t gapsNearTwoDelayedAcks = 0;
    uint64_t storedBytes = 0;
    uint64_t receivedBytes = 0;
    uint64_t answersAcceptingCompression = 0;
    uint64_t transcodeAttempts = 0;
    uint64_t transcodedWithoutHook = 0;

    const PhaseFigures& operator[](Phase phase) const { return phases[static_cast<size_t>(phase)]; }
    uint64_t Outcomes(Outcome outcome) const { return outcomes[static_cast<size_t>(outcome)]; }
    uint64_t Failures(FailureReason reason) const { return failures[static_cast<size_t>(reason)]; }
  };

  // Instances that failed from one sender (since the reset: the labelled streams keep no window).
  struct FailingSender
  {
    Transport transport = Transport::Dicom;
    std::string remoteAet;  // as exported ("(none)" over HTTP)
    std::string remoteIp;
    uint64_t failed = 0;
    std::array<uint64_t, kFailureReasonCount> reasons{};
  };

  struct DiagnosisInput
  {
    std::string window;  // "1m", "5m", "15m", "1h", or "sinceReset"
    double seconds = 0;  // the time the figures cover
    // The part of it with ingest: from the first instance to the last store since the reset, within
    // the window. Rates and pool occupancy are over this span, not diluted by idle minutes.
    double activeSeconds = 0;
    bool labelFiltered = false;
    std::array<TransportFigures, kTransportCount> transports;
    TransportFigures all;                       // the transports of the query, merged
    std::vector<FailingSender> failingSenders;  // most failed first
    SinceReset sinceReset;                      // what was stored before the window, if it is idle

    // The host.
    std::string orthancVersion;
    Configuration configuration;
    bool dicomTcpNoDelay = false;         // TCP_NODELAY in effect on Orthanc's DICOM associations
    bool timedStorageActive = false;      // IngestPerf.TimedStorage asked for, and started
    bool transcoderHook = false;          // the transcode phase can be measured
    int64_t dicomConnectionsNow = -1;     // Orthanc's DICOM connections as last read; -1 unknown
    int64_t httpConnectionsNow = -1;      // to HttpPort, in the last sample if it is recent; -1 unknown
    uint64_t associationsInProgress = 0;  // inferred chains, all calling AETs
    // The connections sampled over the span with ingest (IngestWatcher); samples == 0 if none.
    ConnectionSummary connections;
    uint64_t changeBacklog = 0;
    PhaseFigures changePerInstanceWhileBacklogged;
    double storageCreateMegabytesPerSecond = -1;  // timed storage only
  };

  // From a report collected for `query` (its window, transport and label filters); `sampler` (null if
  // none) gives the connections sampled over the span with ingest, and the latest of them.
  DiagnosisInput GatherDiagnosisInput(const IngestReport& report, const StatsQuery& query,
                                      const IngestWatcher* sampler);
}
