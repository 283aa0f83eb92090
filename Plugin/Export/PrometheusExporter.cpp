#include "Export/PrometheusExporter.h"

#include "Export/PrometheusText.h"
#include "Labels/PeerPseudonym.h"
#include "Metrics/Histogram.h"
#include "Recording/Unobservable.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  using namespace PrometheusFormat;

  namespace
  {
    std::vector<PrometheusBucketBound> MakeLadder()
    {
      std::vector<PrometheusBucketBound> ladder;
      for (uint64_t decade = 100000; decade <= uint64_t(100000000000); decade *= 10)
      {
        for (uint64_t step : {1, 2, 5})
        {
          const uint64_t nominal = decade * step;
          if (nominal > uint64_t(100000000000))
          {
            break;
          }
          const size_t index = Histogram::BucketIndex(nominal);
          const uint64_t boundary = Histogram::BucketLowest(index);
          ladder.push_back(PrometheusBucketBound{nominal, boundary, index, NanosecondsToSecondsText(boundary - 1)});
        }
      }
      return ladder;
    }

    const Ladder& TransportLadder()
    {
      static const Ladder ladder(PrometheusLadder());
      return ladder;
    }

    std::string TransportLabel(Transport transport)
    {
      return std::string("transport=\"") + TransportName(transport) + '"';
    }

    const std::array<std::string, kLabelDimensions>& SnakeCaseLabelNames()
    {
      static const std::array<std::string, kLabelDimensions> names = [] {
        std::array<std::string, kLabelDimensions> result;
        for (size_t d = 0; d < kLabelDimensions; d++)
        {
          result[d] = PrometheusLabelName(static_cast<LabelDimension>(d));
        }
        return result;
      }();
      return names;
    }

    bool HasInstances(const TransportSnapshot& transport)
    {
      for (uint64_t count : transport.outcomes)
      {
        if (count != 0)
        {
          return true;
        }
      }
      return false;
    }

    // Where each phase's time went, over the instances that had it split (IngestPerf.PhasePartsSampling):
    // counters, whose rates give the mean of each part (rate of a part / rate of the split instances).
    void AppendPartFamilies(PrometheusText& out, const StatsSnapshot& snapshot, const PluginStatus* status)
    {
      const char* parts = "orthanc_ingest_phase_part_seconds_total";
      const char* split = "orthanc_ingest_phase_split_instances_total";
      const bool runDelay = RunDelayUnobservableReason() == nullptr;
      std::vector<std::pair<std::string, const PhasePartsSnapshot*>> rows;
      for (size_t t = 0; t < kTransportCount; t++)
      {
        const Transport which = static_cast<Transport>(t);
        if (!HasInstances(snapshot.transports[t]))
        {
          continue;
        }
        for (size_t p = 0; p < kPhaseCount; p++)
        {
          const Phase phase = static_cast<Phase>(p);
          if (status != nullptr && (PhaseUnobservableReason(*status, &which, phase) != nullptr ||
                                    PhasePartsUnobservableReason(*status, phase) != nullptr))
          {
            continue;
          }
          rows.emplace_back(TransportLabel(which) + ",phase=\"" + DefinitionOf(phase).name + '"',
                            &snapshot.transports[t].PartsOf(phase));
        }
      }
      if (rows.empty())
      {
        return;  // nothing split yet: an idle scrape stays small
      }
      AppendHeader(out, parts, "counter",
                   "Time of each phase on a CPU (onCpu), waiting for one (waitingForCpu) and blocked, summed over "
                   "the instances split (IngestPerf.PhasePartsSampling); the three add up to their duration "
                   "(docs/phases.md).");
      for (const auto& row : rows)
      {
        const PhasePartsSnapshot& sums = *row.second;
        const uint64_t values[kPhasePartCount] = {sums.cpuNs, sums.runDelayNs, sums.BlockedNs()};
        for (size_t part = 0; part < kPhasePartCount; part++)
        {
          if (static_cast<PhasePart>(part) == PhasePart::WaitingForCpu && !runDelay)
          {
            continue;
          }
          AppendSample(out, parts, "", row.first, "part", DefinitionOf(static_cast<PhasePart>(part)).name);
          AppendSeconds(out, values[part]);
          out += '\n';
        }
      }
      AppendHeader(out, split, "counter", "Instances whose phase was split into its parts, per transport and phase.");
      for (const auto& row : rows)
      {
        AppendSample(out, split, "", row.first, nullptr, std::string());
        AppendUnsigned(out, row.second->sampled);
        out += '\n';
      }
    }

    void AppendTransportFamilies(PrometheusText& out, const StatsSnapshot& snapshot, const PluginStatus* status)
    {
      // Only what can be measured: a phase the running mode cannot time on a transport (off by
      // configuration, or never observable there) is left out rather than exported as zeros, and a
      // transport's histograms appear with its first instance. An idle scrape stays small.
      struct Measured
      {
        std::string labels;
        Phase phase;
        const HistogramSnapshot* histogram;
      };
      std::vector<Measured> measured;
      for (size_t t = 0; t < kTransportCount; t++)
      {
        const Transport which = static_cast<Transport>(t);
        if (!HasInstances(snapshot.transports[t]))
        {
          continue;
        }
        for (size_t p = 0; p < kPhaseCount; p++)
        {
          const Phase phase = static_cast<Phase>(p);
          if (status == nullptr || PhaseUnobservableReason(*status, &which, phase) == nullptr)
          {
            measured.push_back(Measured{TransportLabel(which) + ",phase=\"" + DefinitionOf(phase).name + '"', phase,
                                        &snapshot.transports[t].phases[p]});
          }
        }
      }
      // Buckets for what an operator alerts on (the whole store, the waits between a sender's
      // instances); a sum and a count for every phase, whose rates give its mean.
      const char* durations = "orthanc_ingest_phase_duration_seconds";
      AppendHeader(out, durations, "histogram",
                   "serverTotal, associationGap and requestGap per transport since the start or the last POST "
                   "/perf/reset (every phase's mean: orthanc_ingest_phase_seconds).");
      for (const Measured& row : measured)
      {
        if (row.phase == Phase::ServerTotal || row.phase == Phase::AssociationGap || row.phase == Phase::RequestGap)
        {
          AppendHistogram(out, durations, row.labels, *row.histogram, TransportLadder());
        }
      }
      const char* phases = "orthanc_ingest_phase_seconds";
      AppendHeader(out, phases, "summary",
                   "Time of each ingest phase per transport: _sum / _count is its mean; the phases measured in the "
                   "running mode (/perf/stats says why the others are not), from the transport's first instance.");
      for (const Measured& row : measured)
      {
        AppendSummary(out, phases, row.labels, row.histogram->Count(), row.histogram->Sum());
      }
      AppendPartFamilies(out, snapshot, status);

      const char* instances = "orthanc_ingest_instances_total";
      AppendHeader(out, instances, "counter", "Instances per transport and outcome (stored, alreadyStored, ...).");
      for (size_t t = 0; t < kTransportCount; t++)
      {
        for (size_t o = 0; o < kOutcomeCount; o++)
        {
          AppendSample(out, instances, "", TransportLabel(static_cast<Transport>(t)), "outcome",
                       DefinitionOf(static_cast<Outcome>(o)).name);
          AppendUnsigned(out, snapshot.transports[t].outcomes[o]);
          out += '\n';
        }
      }

      const char* failures = "orthanc_ingest_failed_instances_total";
      AppendHeader(out, failures, "counter",
                   "Instances whose store failed, per transport and reason (docs/outcomes.md); their sum is the "
                   "outcome failed.");
      for (size_t t = 0; t < kTransportCount; t++)
      {
        for (size_t r = 0; r < kFailureReasonCount; r++)
        {
          AppendSample(out, failures, "", TransportLabel(static_cast<Transport>(t)), "reason",
                       DefinitionOf(static_cast<FailureReason>(r)).name);
          AppendUnsigned(out, snapshot.transports[t].Failures(static_cast<FailureReason>(r)));
          out += '\n';
        }
      }

      const struct
      {
        const char* name;
        const char* help;
        HistogramSnapshot TransportSnapshot::*bytes;
      } sizes[] = {
        {"orthanc_ingest_received_bytes_total", "Bytes of the DICOM files received, per transport.",
         &TransportSnapshot::receivedBytes},
        {"orthanc_ingest_stored_bytes_total", "Bytes of the DICOM files stored, per transport.",
         &TransportSnapshot::storedBytes},
      };
      for (const auto& size : sizes)
      {
        AppendHeader(out, size.name, "counter", size.help);
        for (size_t t = 0; t < kTransportCount; t++)
        {
          AppendSample(out, size.name, "", TransportLabel(static_cast<Transport>(t)), nullptr, std::string());
          AppendUnsigned(out, (snapshot.transports[t].*size.bytes).Sum());
          out += '\n';
        }
      }
    }

    // Per label, one label at a time over every transport (the per-transport figures are above): the
    // calling AET and the client's address unless IngestPerf.PrometheusLabels names others. Counters
    // and sums only, no buckets: with every table full (MaxLabelValues values of each) the whole
    // answer stays under 100 KB with the two, where a histogram per label set (MaxStreams of them, 8
    // labels each) made 0.7 MB. GET /perf/stats?groupBy= has every label and their quantiles.
    struct LabelSums
    {
      std::array<uint64_t, kOutcomeCount> outcomes{};
      uint64_t serverCount = 0;
      uint64_t serverNs = 0;
      uint64_t gapCount = 0;
      uint64_t gapNs = 0;
    };

    void AppendLabelFamilies(PrometheusText& out, const IngestReport& report, bool hashPeers)
    {
      const LabelCatalog& catalog = *report.catalog;
      uint32_t wanted = 0;
      try
      {
        wanted = PrometheusLabelsOf(report.status != nullptr ? report.status->configuration : Configuration());
      }
      catch (const ConfigurationError&)
      {
        return;  // refused at start-up: the plugin is inert
      }
      for (size_t d = 0; d < kLabelDimensions; d++)
      {
        const LabelDimension dimension = static_cast<LabelDimension>(d);
        if ((wanted >> d & 1u) == 0)
        {
          continue;
        }
        // By the labels' text: the label sets that differ in the other labels add up, and so do ids of
        // two generations of the tables that name one value.
        std::map<std::string, LabelSums> rows;
        for (const auto& stream : report.eachStream)
        {
          const InstanceLabels& labels = stream.first;
          std::string key = SnakeCaseLabelNames()[static_cast<size_t>(dimension)];
          key += "=\"";
          AppendEscaped(key, ExportedLabelValue(dimension, catalog.Name(dimension, labels.Get(dimension)), hashPeers));
          key += '"';
          LabelSums& row = rows[key];
          const TransportSnapshot& figures = stream.second;
          for (size_t o = 0; o < kOutcomeCount; o++)
          {
            row.outcomes[o] += figures.outcomes[o];
          }
          const HistogramSnapshot& server = figures.phases[static_cast<size_t>(Phase::ServerTotal)];
          const HistogramSnapshot& gap = figures.phases[static_cast<size_t>(Phase::AssociationGap)];
          row.serverCount += server.Count();
          row.serverNs += server.Sum();
          row.gapCount += gap.Count();
          row.gapNs += gap.Sum();
        }
        if (rows.empty())
        {
          continue;
        }
        const std::string label = SnakeCaseLabelNames()[static_cast<size_t>(dimension)];
        const std::string instances = "orthanc_ingest_instances_by_" + label + "_total";
        AppendHeader(
          out, instances.c_str(), "counter",
          ("Instances per " + label + " (docs/labels.md) and outcome, every transport; the outcomes seen.").c_str());
        for (const auto& row : rows)
        {
          for (size_t o = 0; o < kOutcomeCount; o++)
          {
            if (row.second.outcomes[o] != 0)
            {
              AppendSample(out, instances.c_str(), "", row.first, "outcome",
                           DefinitionOf(static_cast<Outcome>(o)).name);
              AppendUnsigned(out, row.second.outcomes[o]);
              out += '\n';
            }
          }
        }
        // A summary family of the rows with a sample: one phase's sum and count per value.
        const auto summaries = [&](const std::string& name, const std::string& help, uint64_t LabelSums::*count,
                                   uint64_t LabelSums::*ns) {
          AppendHeader(out, name.c_str(), "summary", help.c_str());
          for (const auto& row : rows)
          {
            if (row.second.*count != 0)
            {
              AppendSummary(out, name.c_str(), row.first, row.second.*count, row.second.*ns);
            }
          }
        };
        summaries("orthanc_ingest_server_total_seconds_by_" + label,
                  "serverTotal of the stored instances per " + label +
                    ", every transport: _sum / _count is its mean (quantiles: GET /perf/stats?groupBy=).",
                  &LabelSums::serverCount, &LabelSums::serverNs);
        // A wait between a sender's instances is the sender's, not its SOP class's or syntax's.
        if (dimension == LabelDimension::RemoteAet || dimension == LabelDimension::RemoteIp ||
            dimension == LabelDimension::CalledAet)
        {
          summaries("orthanc_ingest_association_gap_seconds_by_" + label,
                    "associationGap (C-STORE: from one instance's answer to the next instance) per " + label +
                      ": _sum / _count is its mean.",
                    &LabelSums::gapCount, &LabelSums::gapNs);
        }
      }
    }

    void AppendStateFamily(PrometheusText& out, const PluginStatus& status)
    {
      const char* name = "orthanc_ingest_plugin_state";
      AppendHeader(out, name, "gauge",
                   "1 for the plugin's state: running (timing ingest), disabled (IngestPerf.Enable false) or inert "
                   "(it could not start; GET /perf/stats says why).");
      for (PluginState state : {PluginState::Running, PluginState::Disabled, PluginState::Inert})
      {
        AppendSample(out, name, "", std::string(), "state", PluginStateName(state));
        out += status.state == state ? '1' : '0';
        out += '\n';
      }
    }

    // The diagnosis of GET /perf/diagnosis (its default window, the last 5 minutes): one series per
    // rule of docs/diagnosis.md, fired or not, so that the label set never changes.
    void AppendDiagnosisFamilies(PrometheusText& out, const Diagnosis& diagnosis)
    {
      const char* rank = "orthanc_ingest_diagnosis_finding_rank";
      AppendHeader(out, rank, "gauge",
                   "The rank of the rule's finding in GET /perf/diagnosis over the last 5 minutes: 1 for the "
                   "costliest (the verdict), 2 for the next, ...; 0 when the rule found nothing.");
      for (const RuleCheck& check : diagnosis.checks)
      {
        uint64_t position = 0;
        for (size_t f = 0; f < diagnosis.findings.size() && position == 0; f++)
        {
          position = diagnosis.findings[f].id == check.id ? f + 1 : 0;
        }
        AppendSample(out, rank, "", std::string(), "rule", check.id);
        AppendUnsigned(out, position);
        out += '\n';
      }
      const char* cost = "orthanc_ingest_diagnosis_finding_cost_seconds";
      AppendHeader(out, cost, "gauge",
                   "What the rule's finding costs each instance (a mean over the last 5 minutes, the largest of "
                   "its transports); 0 when it found nothing or its cost cannot be observed.");
      for (const RuleCheck& check : diagnosis.checks)
      {
        double ms = 0;
        for (const Finding& finding : diagnosis.findings)
        {
          if (finding.id == check.id && finding.costKind != CostKind::Unobservable && finding.costMsPerInstance > ms)
          {
            ms = finding.costMsPerInstance;
          }
        }
        AppendSample(out, cost, "", std::string(), "rule", check.id);
        AppendSeconds(out, static_cast<uint64_t>(std::llround(ms * 1e6)));
        out += '\n';
      }
    }

    void AppendNowFamilies(PrometheusText& out, const IngestReport& report)
    {
      const int64_t taken = report.snapshot.takenNs;
      const auto age = [taken](int64_t startNs) {
        std::string text;
        AppendSeconds(text, startNs == 0 ? 0 : static_cast<uint64_t>(std::max<int64_t>(0, taken - startNs)));
        return text;
      };
      std::string number;
      const auto text = [&number](uint64_t value) {
        number.clear();
        AppendUnsigned(number, value);
        return number;
      };
      AppendGauge(out, "orthanc_ingest_open_records", "Instances inside Orthanc's store now, not yet stored.",
                  text(report.openRecords.count));
      AppendGauge(out, "orthanc_ingest_open_record_oldest_age_seconds",
                  "Age of the oldest instance inside Orthanc's store now (0 when none).",
                  age(report.openRecords.oldestStartNs));
      AppendGauge(out, "orthanc_ingest_receiving_requests",
                  "HTTP ingest requests still receiving their body, without an instance yet.",
                  text(report.openRecords.receivingCount));
      AppendGauge(out, "orthanc_ingest_change_backlog",
                  "Stored instances whose NewInstance change was not delivered to OnChange yet.",
                  text(report.changes.NewInstanceBacklog()));
      if (report.associations.connectionsReadNs != 0)
      {
        uint64_t open = 0;
        for (const DicomConnection& connection : report.associations.connections)
        {
          open += connection.closedNs == 0 ? 1 : 0;
        }
        AppendGauge(out, "orthanc_ingest_open_dicom_connections",
                    "Orthanc's DICOM connections as last read (open associations).", text(open));
      }
      AppendGauge(out, "orthanc_ingest_streams_used", "Labelled streams in use, of MaxStreams.",
                  text(report.streams.used));
      AppendGauge(out, "orthanc_ingest_streams_capacity", "MaxStreams: labelled streams available.",
                  text(report.streams.capacity));

      const char* cost = "orthanc_ingest_plugin_cost_seconds_total";
      AppendHeader(out, cost, "counter",
                   "The plugin's own CPU time: its callbacks (one call in 17 timed per thread, times 17), its "
                   "thread while Orthanc ingests (\"ingestWatcher\") and while it is idle (\"ingestWatcherIdle\").");
      const PluginCostSnapshot& plugin = report.pluginCost;
      const auto sample = [&](const char* part, uint64_t ns) {
        AppendSample(out, cost, "", std::string(), "callback", part);
        AppendSeconds(out, ns);
        out += '\n';
      };
      for (size_t c = 0; c < kCallbackCount; c++)
      {
        sample(CallbackName(static_cast<Callback>(c)), plugin.callbacks[c].Sum() * PluginCost::kSamplingPeriod);
      }
      sample("ingestWatcher", static_cast<uint64_t>(std::max<int64_t>(0, plugin.watcher.activeCpuNs)));
      sample("ingestWatcherIdle", static_cast<uint64_t>(std::max<int64_t>(0, plugin.watcher.idleCpuNs)));
      const uint64_t totalNs = plugin.IngestNs();
      const uint64_t stored = report.snapshot.AllTransports().outcomes[static_cast<size_t>(Outcome::Stored)];
      std::string perInstance;
      AppendSeconds(perInstance, stored == 0 ? 0 : totalNs / stored);
      AppendGauge(out, "orthanc_ingest_plugin_cost_per_stored_instance_seconds",
                  "The plugin's own CPU time per stored instance (callbacks and its thread while Orthanc ingests), "
                  "since the start or the last reset.",
                  perInstance);
    }
  }


  const std::vector<PrometheusBucketBound>& PrometheusLadder()
  {
    static const std::vector<PrometheusBucketBound> ladder = MakeLadder();
    return ladder;
  }


  bool IsPerStreamPhase(Phase phase)
  {
    return phase == Phase::ServerTotal || phase == Phase::AssociationGap;
  }


  uint32_t PrometheusLabelsOf(const Configuration& configuration)
  {
    uint32_t labels = 0;
    for (const std::string& name : configuration.prometheusLabels)
    {
      LabelDimension dimension = LabelDimension::Transport;
      if (!ParseLabelDimension(dimension, name.c_str()) || dimension == LabelDimension::Transport)
      {
        throw ConfigurationError(std::string(kConfigurationSection) +
                                 ".PrometheusLabels: expected label names among remoteAet, remoteIp, calledAet, "
                                 "receivedSyntax, storedSyntax, sopClass and sizeClass, got \"" +
                                 name + "\"");
      }
      labels |= 1u << static_cast<unsigned>(dimension);
    }
    return labels;
  }


  std::string NanosecondsToSecondsText(uint64_t ns)
  {
    std::string text;
    AppendSeconds(text, ns);
    return text;
  }


  std::string PrometheusLabelName(LabelDimension dimension)
  {
    std::string name;
    for (const char* c = LabelDimensionName(dimension); *c != '\0'; c++)
    {
      if (*c >= 'A' && *c <= 'Z')
      {
        name += '_';
        name += static_cast<char>(*c - 'A' + 'a');
      }
      else
      {
        name += *c;
      }
    }
    return name;
  }


  std::string EscapePrometheusLabelValue(const std::string& value)
  {
    std::string escaped;
    AppendEscaped(escaped, value);
    return escaped;
  }


  void ExportPrometheus(const IngestReport& report, MappedText& text, const Diagnosis* diagnosis)
  {
    PrometheusText out(text);
    const bool hashPeers = report.status != nullptr && report.status->configuration.hashPeers;

    AppendHeader(out, "orthanc_ingest_up", "gauge",
                 "1 when the plugin is timing ingest, 0 when it is disabled or inert (orthanc_ingest_plugin_state).");
    out += "orthanc_ingest_up ";
    out += report.collected ? '1' : '0';
    out += '\n';
    if (report.status != nullptr)
    {
      AppendStateFamily(out, *report.status);
    }
    if (!report.collected)
    {
      return;
    }
    AppendGauge(out, "orthanc_ingest_since_reset_seconds",
                "Time since the plugin started or the last POST /perf/reset.",
                NanosecondsToSecondsText(
                  static_cast<uint64_t>(std::max<int64_t>(0, report.snapshot.takenNs - report.snapshot.resetNs))));
    AppendTransportFamilies(out, report.snapshot, report.status);
    if (report.catalog != nullptr)
    {
      AppendLabelFamilies(out, report, hashPeers);
    }
    AppendNowFamilies(out, report);
    if (diagnosis != nullptr)
    {
      AppendDiagnosisFamilies(out, *diagnosis);
    }
  }


  std::string ExportPrometheus(const IngestReport& report, const Diagnosis* diagnosis)
  {
    MappedText text;
    ExportPrometheus(report, text, diagnosis);
    return std::string(text.Data(), text.Size());
  }
}
