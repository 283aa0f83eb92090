#include "Diagnosis/DiagnosisInput.h"

#include "Labels/PeerPseudonym.h"

#include <algorithm>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    constexpr double kNsPerMs = 1e6;
    constexpr int64_t kMs = 1000000LL;

    double Ms(int64_t ns)
    {
      return static_cast<double>(ns) / kNsPerMs;
    }

    struct BandFigures
    {
      uint64_t count = 0;
      double ms = 0;
    };

    // The values of `histogram` within `band`, and their time, each counted at its bucket's middle.
    BandFigures Within(const HistogramSnapshot& histogram, const GapBand& band)
    {
      // The buckets from the one of fromMs to the one before the bucket of toMs.
      const size_t first = Histogram::BucketIndex(static_cast<uint64_t>(band.fromMs * kMs));
      const size_t last = Histogram::BucketIndex(static_cast<uint64_t>(band.toMs * kMs));
      BandFigures figures;
      for (size_t index = first; index < last; index++)
      {
        const uint64_t count = histogram.BucketCount(index);
        const double middle = static_cast<double>(Histogram::BucketLowest(index)) + Histogram::BucketWidth(index) / 2.0;
        figures.count += count;
        figures.ms += static_cast<double>(count) * middle / kNsPerMs;
      }
      return figures;
    }

    // `clientTimer`: whether the gaps may be a client's delayed ACK (Orthanc's answers wait for it
    // without TCP_NODELAY): then the timer is the one the gaps show; else only Orthanc's own host's,
    // Linux's 40 ms, can hold a sender's data (a sender pausing 190 ms is no 200 ms timer).
    TransportFigures FiguresOf(const TransportSnapshot& transport, bool clientTimer)
    {
      TransportFigures figures;
      figures.outcomes = transport.outcomes;
      figures.stored = transport.outcomes[static_cast<size_t>(Outcome::Stored)];
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        figures.phases[p] = FiguresOf(transport.phases[p]);
        figures.phases[p].parts = FiguresOf(transport.PartsOf(static_cast<Phase>(p)));
      }
      const HistogramSnapshot& gaps = transport.phases[static_cast<size_t>(Phase::AssociationGap)];
      figures.delayedAck = clientTimer ? &DelayedAckTimerOf(gaps) : &kLinuxDelayedAck;
      const BandFigures one = Within(gaps, figures.delayedAck->one);
      const BandFigures two = Within(gaps, figures.delayedAck->two);
      figures.gapsNearDelayedAck = one.count;
      figures.gapsNearTwoDelayedAcks = two.count;
      figures.gapMsNearDelayedAcks = one.ms + two.ms;
      figures.storedBytes = transport.storedBytes.Sum();
      figures.receivedBytes = transport.receivedBytes.Sum();
      figures.answersAcceptingCompression = transport.Count(Counter::AnswersAcceptingCompression);
      figures.transcodeAttempts = transport.Count(Counter::TranscodeAttempts);
      figures.transcodedWithoutHook = transport.Count(Counter::TranscodedWithoutHook);
      for (size_t r = 0; r < kFailureReasonCount; r++)
      {
        figures.failures[r] = transport.Failures(static_cast<FailureReason>(r));
      }
      return figures;
    }
  }


  const DelayedAckTimer& DelayedAckTimerOf(const HistogramSnapshot& gaps)
  {
    return Within(gaps, kWindowsDelayedAck.one).count > Within(gaps, kLinuxDelayedAck.one).count ? kWindowsDelayedAck
                                                                                                 : kLinuxDelayedAck;
  }


  PartFigures FiguresOf(const PhasePartsSnapshot& parts)
  {
    PartFigures figures;
    figures.sampled = parts.sampled;
    figures.runDelaySampled = parts.runDelaySampled;
    if (parts.sampled == 0)
    {
      return figures;
    }
    const double count = static_cast<double>(parts.sampled);
    figures.meanMs = Ms(static_cast<int64_t>(parts.durationNs)) / count;
    figures.onCpuMs = Ms(static_cast<int64_t>(parts.cpuNs)) / count;
    figures.waitingForCpuMs = Ms(static_cast<int64_t>(parts.runDelayNs)) / count;
    figures.blockedMs = Ms(static_cast<int64_t>(parts.BlockedNs())) / count;
    return figures;
  }


  PhaseFigures FiguresOf(const HistogramSnapshot& durations)
  {
    PhaseFigures figures;
    figures.count = durations.Count();
    if (figures.count == 0)
    {
      return figures;
    }
    figures.sumMs = Ms(static_cast<int64_t>(durations.Sum()));
    figures.meanMs = durations.Mean() / kNsPerMs;
    figures.p50Ms = Ms(durations.ValueAtQuantile(0.5));
    figures.p90Ms = Ms(durations.ValueAtQuantile(0.9));
    figures.p99Ms = Ms(durations.ValueAtQuantile(0.99));
    figures.maxMs = Ms(durations.Max());
    return figures;
  }


  DiagnosisInput GatherDiagnosisInput(const IngestReport& report, const StatsQuery& query, const IngestWatcher* sampler)
  {
    DiagnosisInput input;
    const PluginStatus& status = *report.status;
    input.orthancVersion = status.orthancVersion;
    input.configuration = status.configuration;
    input.timedStorageActive = status.storage.active;
    input.storageOwner = !status.configuration.storagePluginSection.empty() ? status.configuration.storagePluginSection
                         : status.storage.heldByAnotherPlugin               ? "a storage plugin loaded before this one"
                                                                            : "";
    input.transcoderHook = status.hooks.transcoder.registered;
    input.pluginsBefore = status.laterPlugins.loadedBefore;
    input.pluginsAfter = status.laterPlugins.loadedAfter;
    input.receivedInstanceHeld = status.hooks.receivedInstance.Get() == ReceivedInstanceHook::State::Held;
    input.dicomTcpNoDelay = status.dicomTcpNoDelay.inEffect;
    input.sinceReset = report.snapshot.History();
    if (!report.collected)
    {
      return input;
    }

    const StatsSnapshot& snapshot = report.snapshot;
    const double sinceReset = Ms(std::max<int64_t>(0, snapshot.takenNs - snapshot.resetNs)) / 1000;
    const std::array<TransportSnapshot, kTransportCount>* source = &snapshot.transports;
    input.window = "sinceReset";
    input.seconds = sinceReset;
    if (query.UsesStreams())
    {
      source = &report.grouped.transports;
      input.labelFiltered = true;
    }
    else if (query.hasWindow && report.windowsKept)
    {
      source = &report.window.transports;
      input.window = WindowName(query.window);
      input.seconds = Ms(report.window.coveredNs) / 1000;
    }

    // The span with ingest: from the first instance of the figures judged (or the window's start, if
    // later) to their last store; idle minutes before or after would dilute the rates and pool
    // occupancies. The same span as the throughput of /perf/stats for the same query.
    int64_t firstStartNs = 0;
    int64_t lastStoredNs = 0;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      const int64_t start = (*source)[t].firstStartNs;
      if (start != 0 && (firstStartNs == 0 || start < firstStartNs))
      {
        firstStartNs = start;
      }
      lastStoredNs = std::max(lastStoredNs, (*source)[t].lastStoredNs);
    }
    const int64_t windowStartNs = snapshot.takenNs - static_cast<int64_t>(input.seconds * 1e9);
    const int64_t fromNs = std::max(firstStartNs, windowStartNs);
    input.activeSeconds = (firstStartNs == 0 || lastStoredNs <= fromNs) ? 0.0 : Ms(lastStoredNs - fromNs) / 1000;
    if (sampler != nullptr && firstStartNs != 0)
    {
      input.connections = sampler->Summarize(fromNs, snapshot.takenNs, status.configuration.dicomThreadsCount,
                                             status.configuration.httpThreadsCount);
    }

    TransportSnapshot merged;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      const Transport transport = static_cast<Transport>(t);
      if (query.scope == StatsQuery::Scope::Single && transport != query.transport)
      {
        continue;
      }
      input.transports[t] = FiguresOf((*source)[t], !input.dicomTcpNoDelay);
      merged.Merge((*source)[t]);
    }
    input.all = FiguresOf(merged, !input.dicomTcpNoDelay);

    if (report.associations.connectionsReadNs != 0)
    {
      input.dicomConnectionsNow = 0;
      for (const DicomConnection& connection : report.associations.connections)
      {
        input.dicomConnectionsNow += connection.closedNs == 0 ? 1 : 0;
      }
    }
    // The newest sample, if taken within the last two seconds (while Orthanc ingests).
    if (input.connections.last.ns != 0 && snapshot.takenNs - input.connections.last.ns <= 2 * int64_t(1000000000))
    {
      input.httpConnectionsNow = input.connections.last.http;
    }
    for (const PeerAssociations& peer : report.associations.peers)
    {
      input.associationsInProgress += peer.inProgress;
    }
    if (report.catalog != nullptr)
    {
      for (const auto& stream : report.failingStreams)
      {
        FailingSender sender;
        sender.transport = stream.first.GetTransport();
        if (query.scope == StatsQuery::Scope::Single && sender.transport != query.transport)
        {
          continue;
        }
        sender.remoteAet = ExportedLabelValue(
          LabelDimension::RemoteAet,
          report.catalog->Name(LabelDimension::RemoteAet, stream.first.Get(LabelDimension::RemoteAet)),
          status.configuration.hashPeers);
        sender.remoteIp =
          ExportedLabelValue(LabelDimension::RemoteIp,
                             report.catalog->Name(LabelDimension::RemoteIp, stream.first.Get(LabelDimension::RemoteIp)),
                             status.configuration.hashPeers);
        // One sender may have several streams (syntaxes, sizes): one row each.
        auto same = std::find_if(input.failingSenders.begin(), input.failingSenders.end(), [&](const FailingSender& s) {
          return s.transport == sender.transport && s.remoteAet == sender.remoteAet && s.remoteIp == sender.remoteIp;
        });
        FailingSender& target = same != input.failingSenders.end()
                                  ? *same
                                  : (input.failingSenders.push_back(sender), input.failingSenders.back());
        target.failed += stream.second.outcomes[static_cast<size_t>(Outcome::Failed)];
        for (size_t r = 0; r < kFailureReasonCount; r++)
        {
          target.reasons[r] += stream.second.Failures(static_cast<FailureReason>(r));
        }
      }
      std::stable_sort(input.failingSenders.begin(), input.failingSenders.end(),
                       [](const FailingSender& a, const FailingSender& b) { return a.failed > b.failed; });
    }
    if (report.catalog != nullptr && (query.scope != StatsQuery::Scope::Single || query.transport == Transport::Dicom))
    {
      for (const auto& stream : report.associations.gaps)
      {
        const std::string& name =
          report.catalog->Name(LabelDimension::RemoteAet, stream.first.Get(LabelDimension::RemoteAet));
        CStoreSender sender;
        sender.remoteAet = ExportedLabelValue(LabelDimension::RemoteAet, name, status.configuration.hashPeers);
        // One calling AET may have several streams (syntaxes, sizes): one row.
        auto same = std::find_if(input.cstoreSenders.begin(), input.cstoreSenders.end(),
                                 [&](const CStoreSender& s) { return s.remoteAet == sender.remoteAet; });
        CStoreSender& target = same != input.cstoreSenders.end()
                                 ? *same
                                 : (input.cstoreSenders.push_back(sender), input.cstoreSenders.back());
        target.software = SenderSoftwareOfCallingAet(name);
        // Read by sender-stall only, which judges with TCP_NODELAY on Orthanc's side: a sender's own
        // stall waits for the acknowledgement of Orthanc's Linux host.
        const BandFigures one = Within(stream.second, kLinuxDelayedAck.one);
        const BandFigures two = Within(stream.second, kLinuxDelayedAck.two);
        target.gaps += stream.second.Count();
        target.gapsNearDelayedAcks += one.count + two.count;
        target.gapMsNearDelayedAcks += one.ms + two.ms;
      }
      std::stable_sort(
        input.cstoreSenders.begin(), input.cstoreSenders.end(),
        [](const CStoreSender& a, const CStoreSender& b) { return a.gapMsNearDelayedAcks > b.gapMsNearDelayedAcks; });
    }
    input.changeBacklog = report.changes.NewInstanceBacklog();
    input.changePerInstanceWhileBacklogged = FiguresOf(report.changes.perInstanceWhileBacklogged);

    const StorageOperationSnapshot& create = report.storage[static_cast<size_t>(StorageOperation::Create)];
    if (input.timedStorageActive && create.durations.Sum() > 0)
    {
      input.storageCreateMegabytesPerSecond =
        static_cast<double>(create.bytes) / 1e6 / (static_cast<double>(create.durations.Sum()) / 1e9);
    }
    return input;
  }


  std::string WindowText(const std::string& window)
  {
    if (window == "1m")
    {
      return "the last minute";
    }
    if (window == "5m")
    {
      return "the last 5 minutes";
    }
    if (window == "15m")
    {
      return "the last 15 minutes";
    }
    if (window == "1h")
    {
      return "the last hour";
    }
    return "the window";
  }
}
