// The figures the diagnosis rules read, gathered from one report: per transport (over the query's
// window, or since the reset), the phases in milliseconds, outcomes and counters; and what the
// host is configured to do and holds right now (worker pools, open connections, change backlog).
// Plain numbers, so that the rules can be tested on any situation without an Orthanc.
#pragma once

#include "Correlation/IngestWatcher.h"
#include "Diagnosis/SenderSoftware.h"
#include "Metrics/StatsQuery.h"
#include "Platform/Configuration.h"
#include "Recording/IngestReport.h"
#include "Vocabulary/IngestVocabulary.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace IngestPerf
{
  // The associationGap bands of a delayed-ACK timer, in milliseconds: one timer, from 0.9 of it (the
  // timer less its tick) to 1.8 of it (plus the dataset's transfer and the sender's own work per
  // instance: pynetdicom's stalled gaps are 53-65 ms at 40 ms); two timers, 1.9 to 2.8 of it
  // (Orthanc's answer and a sender's small dataset both held, each by its own timer).
  struct GapBand
  {
    double fromMs;
    double toMs;
  };

  // The delayed-ACK timers the gaps are read against: 40 ms (Linux's minimum, what a Linux sender
  // and Orthanc on Linux use) and 200 ms (Windows' default, on which many modality consoles run).
  // Without TCP_NODELAY on Orthanc's side its answers wait for the client's timer, whichever the
  // gaps show: the one whose one-timer band holds more of them (DelayedAckTimerOf). With it, only a
  // sender's data can wait, for Orthanc's own host's timer: 40 ms (a sender pausing 190 ms on its own
  // is no 200 ms timer).
  struct DelayedAckTimer
  {
    double ms;
    GapBand one;
    GapBand two;
  };
  constexpr DelayedAckTimer kLinuxDelayedAck{40, {36, 72}, {76, 112}};
  constexpr DelayedAckTimer kWindowsDelayedAck{200, {180, 360}, {380, 560}};

  // The timer whose bands `gaps` (an associationGap histogram) fall in: 200 ms when more gaps are in
  // its one-timer band than in 40 ms's, else 40 ms (also when neither holds any).
  const DelayedAckTimer& DelayedAckTimerOf(const HistogramSnapshot& gaps);

  // Where a phase's time went, over the instances that had it split (PhasePartsSampling): means
  // that add up to `meanMs`, the mean duration of those instances.
  struct PartFigures
  {
    uint64_t sampled = 0;
    uint64_t runDelaySampled = 0;  // of them, those with a run delay (else it is in blocked)
    double meanMs = 0;
    double onCpuMs = 0;
    double waitingForCpuMs = 0;
    double blockedMs = 0;

    double OnCpuShare() const { return meanMs > 0 ? onCpuMs / meanMs : 0; }
    double WaitingShare() const { return meanMs > 0 ? waitingForCpuMs / meanMs : 0; }
    double BlockedShare() const { return meanMs > 0 ? blockedMs / meanMs : 0; }
  };

  PartFigures FiguresOf(const PhasePartsSnapshot& parts);

  struct PhaseFigures
  {
    uint64_t count = 0;
    double sumMs = 0;
    double meanMs = 0;
    double p50Ms = 0;
    double p90Ms = 0;
    double p99Ms = 0;
    double maxMs = 0;
    PartFigures parts;
  };

  PhaseFigures FiguresOf(const HistogramSnapshot& durations);

  struct TransportFigures
  {
    uint64_t stored = 0;
    std::array<uint64_t, kOutcomeCount> outcomes{};
    std::array<uint64_t, kFailureReasonCount> failures{};  // the failed instances by reason
    std::array<PhaseFigures, kPhaseCount> phases;
    // The delayed-ACK timer the associationGap samples show (DelayedAckTimerOf), the samples in its
    // one-timer and two-timer bands, and the time they take (each counted at its bucket's middle).
    const DelayedAckTimer* delayedAck = &kLinuxDelayedAck;
    uint64_t gapsNearDelayedAck = 0;
    uint64_t gapsNearTwoDelayedAcks = 0;
    double gapMsNearDelayedAcks = 0;  // both bands
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

  // The C-STORE gaps of one calling AET (since the reset: the labelled streams keep no window), and
  // what its default name tells of its software.
  struct CStoreSender
  {
    std::string remoteAet;  // as exported (IngestPerf.HashPeers)
    SenderSoftware software = SenderSoftware::Unknown;
    uint64_t gaps = 0;
    uint64_t gapsNearDelayedAcks = 0;  // in either band of Orthanc's host's timer (kLinuxDelayedAck)
    double gapMsNearDelayedAcks = 0;
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
    std::vector<CStoreSender> cstoreSenders;    // most time at the delayed-ACK timer first
    SinceReset sinceReset;                      // what was stored before the window, if it is idle

    // The host.
    std::string orthancVersion;
    Configuration configuration;
    bool dicomTcpNoDelay = false;     // TCP_NODELAY in effect on Orthanc's DICOM associations
    bool timedStorageActive = false;  // IngestPerf.TimedStorage asked for, and started
    // Who owns Orthanc's storage area when it is not Orthanc's folder: a known storage plugin's
    // section, or "a plugin loaded before this one" (the timed storage was refused); "" otherwise.
    std::string storageOwner;
    bool transcoderHook = false;  // the transcode phase can be measured
    // The other plugins whose callbacks run before this plugin's and after them (hooks.otherPlugins).
    std::vector<std::string> pluginsBefore;
    std::vector<std::string> pluginsAfter;
    bool receivedInstanceHeld = false;    // this plugin holds Orthanc's single ReceivedInstanceCallback
    int64_t dicomConnectionsNow = -1;     // Orthanc's DICOM connections as last read; -1 unknown
    int64_t httpConnectionsNow = -1;      // to HttpPort, in the last sample if it is recent; -1 unknown
    uint64_t associationsInProgress = 0;  // inferred chains, all calling AETs
    // The connections sampled over the span with ingest (IngestWatcher); samples == 0 if none.
    ConnectionSummary connections;
    uint64_t changeBacklog = 0;
    PhaseFigures changePerInstanceWhileBacklogged;
    double storageCreateMegabytesPerSecond = -1;  // timed storage only
  };

  // "the last 5 minutes" for "5m" (DiagnosisInput::window), "the window" for another.
  std::string WindowText(const std::string& window);

  // From a report collected for `query` (its window, transport and label filters); `sampler` (null if
  // none) gives the connections sampled over the span with ingest, and the latest of them.
  DiagnosisInput GatherDiagnosisInput(const IngestReport& report, const StatsQuery& query,
                                      const IngestWatcher* sampler);
}
