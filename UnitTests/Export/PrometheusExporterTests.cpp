// PrometheusExporter: the text format, label escaping, the `le` ladder and the exactness of every
// cumulative count against the values recorded.
#include "Export/PrometheusExporter.h"
#include "Labels/PeerPseudonym.h"
#include "Metrics/Histogram.h"
#include "Vocabulary/DicomUids.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

using namespace IngestPerf;

namespace
{
  constexpr int64_t kMs = 1000000;

  HistogramSnapshot SnapshotOf(const std::vector<int64_t>& values)
  {
    Histogram histogram{};
    for (int64_t value : values)
    {
      histogram.Record(value);
    }
    return histogram.Snapshot();
  }

  // Values around every bound of the ladder (below, at, above) and far outside it.
  std::vector<int64_t> AwkwardValues()
  {
    std::vector<int64_t> values = {0, 1, 999, 3 * 3600 * int64_t(1000000000)};
    for (const PrometheusBucketBound& bound : PrometheusLadder())
    {
      const int64_t b = static_cast<int64_t>(bound.boundaryNs);
      values.insert(values.end(), {b - 2, b - 1, b, b + 1, static_cast<int64_t>(bound.nominalNs)});
    }
    return values;
  }

  struct Fixture
  {
    PluginStatus status;
    LabelCatalog catalog{8};
    IngestReport report;

    Fixture()
    {
      report.status = &status;
      report.collected = true;
      report.catalog = &catalog;
    }

    void AddStream(Transport transport, const char* aet, const std::vector<int64_t>& serverTotal, uint64_t stored)
    {
      RawLabels raw;
      raw.remoteAet = aet;
      raw.remoteIp = "10.0.0.7";
      TransportSnapshot snapshot;
      snapshot.phases[static_cast<size_t>(Phase::ServerTotal)] = SnapshotOf(serverTotal);
      snapshot.outcomes[static_cast<size_t>(Outcome::Stored)] = stored;
      report.eachStream.emplace_back(catalog.Intern(transport, raw, 1000), snapshot);
      report.snapshot.transports[static_cast<size_t>(transport)].Merge(snapshot);
    }
  };

  // name{labels} -> value, for every sample line.
  std::map<std::string, std::string> Samples(const std::string& text)
  {
    std::map<std::string, std::string> samples;
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line))
    {
      if (!line.empty() && line[0] != '#')
      {
        const size_t space = line.rfind(' ');
        samples[line.substr(0, space)] = line.substr(space + 1);
      }
    }
    return samples;
  }
}


TEST(PrometheusExporter, LadderIsIncreasingAndMadeOfBucketBoundaries)
{
  const std::vector<PrometheusBucketBound>& ladder = PrometheusLadder();
  ASSERT_EQ(19u, ladder.size());  // 1-2-5 from 100 us to 100 s
  EXPECT_EQ(100000u, ladder.front().nominalNs);
  EXPECT_EQ(uint64_t(100000000000), ladder.back().nominalNs);
  for (size_t i = 0; i < ladder.size(); i++)
  {
    EXPECT_EQ(Histogram::BucketLowest(ladder[i].bucketIndex), ladder[i].boundaryNs);
    EXPECT_LE(ladder[i].boundaryNs, ladder[i].nominalNs);
    EXPECT_GT(ladder[i].boundaryNs + Histogram::BucketWidth(ladder[i].bucketIndex), ladder[i].nominalNs);
    EXPECT_EQ(NanosecondsToSecondsText(ladder[i].boundaryNs - 1), ladder[i].le);
    if (i > 0)
    {
      EXPECT_GT(ladder[i].boundaryNs, ladder[i - 1].boundaryNs);
    }
  }
  EXPECT_EQ("0.000999423", ladder[3].le);  // 1 ms: 122 x 8192 ns is the bucket boundary below it
}


TEST(PrometheusExporter, SecondsAreExactDecimals)
{
  EXPECT_EQ("0", NanosecondsToSecondsText(0));
  EXPECT_EQ("0.000000001", NanosecondsToSecondsText(1));
  EXPECT_EQ("1.5", NanosecondsToSecondsText(1500000000));
  EXPECT_EQ("12", NanosecondsToSecondsText(12000000000));
}


TEST(PrometheusExporter, EscapesLabelValuesAsTheFormatSays)
{
  EXPECT_EQ("plain", EscapePrometheusLabelValue("plain"));
  EXPECT_EQ("a\\\\b\\\"c\\nd", EscapePrometheusLabelValue("a\\b\"c\nd"));
  EXPECT_EQ("remote_aet", PrometheusLabelName(LabelDimension::RemoteAet));
  EXPECT_EQ("size_class", PrometheusLabelName(LabelDimension::SizeClass));

  Fixture fixture;
  // The catalog wrote the backslash "\x5C" (LabelExposure); the format escapes that backslash.
  fixture.AddStream(Transport::Dicom, "A\"B\\C", {kMs}, 1);
  // A Latin-1 byte is "\xC9" from the catalog on: valid UTF-8 in the text.
  fixture.AddStream(Transport::Dicom, "CT_SALLE_\xC9", {kMs}, 1);
  const std::string text = ExportPrometheus(fixture.report);
  EXPECT_NE(std::string::npos, text.find("remote_aet=\"A\\\"B\\\\x5CC\""));
  EXPECT_NE(std::string::npos, text.find("remote_aet=\"CT_SALLE_\\\\xC9\""));
  EXPECT_EQ(std::string::npos, text.find('\xC9'));
}


TEST(PrometheusExporter, EveryLineIsHelpTypeOrAWellFormedSample)
{
  Fixture fixture;
  fixture.AddStream(Transport::Dicom, "CT01", {kMs, 2 * kMs, 40 * kMs}, 3);
  fixture.AddStream(Transport::Rest, nullptr, {5 * kMs}, 1);
  const std::string text = ExportPrometheus(fixture.report);
  const std::regex sample(R"re(^[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",)*[a-z_]+="([^"\\]|\\.)*"\})? [0-9.+Inf]+$)re");
  const std::regex comment(R"(^# (HELP [a-z_]+ .+|TYPE [a-z_]+ (counter|gauge|histogram|summary))$)");
  std::istringstream lines(text);
  std::string line;
  std::string family;
  size_t count = 0;
  while (std::getline(lines, line))
  {
    count++;
    if (line.rfind("# TYPE ", 0) == 0)
    {
      family = line.substr(7, line.find(' ', 7) - 7);
    }
    if (line[0] == '#')
    {
      EXPECT_TRUE(std::regex_match(line, comment)) << line;
    }
    else
    {
      EXPECT_TRUE(std::regex_match(line, sample)) << line;
      EXPECT_EQ(0u, line.rfind(family, 0)) << line << " outside its family " << family;
    }
  }
  EXPECT_GT(count, 100u);
  EXPECT_EQ('\n', text.back());
}


TEST(PrometheusExporter, CumulativeCountsAreExactAndEndWithTheCount)
{
  const std::vector<int64_t> values = AwkwardValues();
  Fixture fixture;
  fixture.AddStream(Transport::Dicom, "CT01", values, values.size());
  const auto samples = Samples(ExportPrometheus(fixture.report));
  const std::string labels = "transport=\"dicom\",phase=\"serverTotal\"";
  uint64_t previous = 0;
  for (const PrometheusBucketBound& bound : PrometheusLadder())
  {
    // What Prometheus means by le: the values at or below it.
    uint64_t expected = 0;
    for (int64_t value : values)
    {
      expected += static_cast<uint64_t>(value) <= bound.boundaryNs - 1 ? 1 : 0;
    }
    const std::string key = "orthanc_ingest_phase_duration_seconds_bucket{" + labels + ",le=\"" + bound.le + "\"}";
    ASSERT_EQ(1u, samples.count(key)) << key;
    const uint64_t exported = std::stoull(samples.at(key));
    EXPECT_EQ(expected, exported) << bound.le;
    EXPECT_GE(exported, previous);
    previous = exported;
  }
  const std::string inf = samples.at("orthanc_ingest_phase_duration_seconds_bucket{" + labels + ",le=\"+Inf\"}");
  EXPECT_EQ(std::to_string(values.size()), inf);
  EXPECT_EQ(inf, samples.at("orthanc_ingest_phase_duration_seconds_count{" + labels + "}"));
  uint64_t sum = 0;
  for (int64_t value : values)
  {
    sum += static_cast<uint64_t>(value);
  }
  EXPECT_EQ(NanosecondsToSecondsText(sum), samples.at("orthanc_ingest_phase_duration_seconds_sum{" + labels + "}"));
  // Per label, the sum and count of the same values.
  EXPECT_EQ(inf, samples.at("orthanc_ingest_server_total_seconds_by_remote_aet_count{remote_aet=\"CT01\"}"));
  EXPECT_EQ(NanosecondsToSecondsText(sum),
            samples.at("orthanc_ingest_server_total_seconds_by_remote_aet_sum{remote_aet=\"CT01\"}"));
}


TEST(PrometheusExporter, CountersMatchTheSnapshot)
{
  Fixture fixture;
  fixture.AddStream(Transport::Dicom, "CT01", {kMs, kMs}, 2);
  fixture.AddStream(Transport::Dicom, "MR02", {kMs}, 1);
  fixture.report.snapshot.transports[static_cast<size_t>(Transport::Rest)]
    .outcomes[static_cast<size_t>(Outcome::NotDicom)] = 4;
  const auto samples = Samples(ExportPrometheus(fixture.report));
  EXPECT_EQ("3", samples.at("orthanc_ingest_instances_total{transport=\"dicom\",outcome=\"stored\"}"));
  EXPECT_EQ("4", samples.at("orthanc_ingest_instances_total{transport=\"rest\",outcome=\"notDicom\"}"));
  EXPECT_EQ("0", samples.at("orthanc_ingest_instances_total{transport=\"job\",outcome=\"stored\"}"));
  EXPECT_EQ("1", samples.at("orthanc_ingest_up"));
  // Per label: the label sets that share a value add up, the other labels left out.
  EXPECT_EQ("2", samples.at("orthanc_ingest_instances_by_remote_aet_total{remote_aet=\"CT01\","
                            "outcome=\"stored\"}"));
  EXPECT_EQ("3", samples.at("orthanc_ingest_instances_by_remote_ip_total{remote_ip=\"10.0.0.7\","
                            "outcome=\"stored\"}"));
  EXPECT_EQ("3", samples.at("orthanc_ingest_server_total_seconds_by_remote_ip_count{"
                            "remote_ip=\"10.0.0.7\"}"));
  EXPECT_EQ("0.003", samples.at("orthanc_ingest_server_total_seconds_by_remote_ip_sum{"
                                "remote_ip=\"10.0.0.7\"}"));
  EXPECT_EQ(0u, samples.count("orthanc_ingest_instances_by_remote_aet_total{remote_aet=\"CT01\","
                              "outcome=\"failed\"}"));  // outcomes never seen are left out
}


TEST(PrometheusExporter, OtherLabelsWhenAskedFor)
{
  Fixture fixture;
  fixture.AddStream(Transport::Dicom, "CT01", {kMs, kMs}, 2);
  EXPECT_EQ(std::string::npos, ExportPrometheus(fixture.report).find("sop_class"));
  fixture.status.configuration.prometheusLabels = {"sopClass"};
  const auto samples = Samples(ExportPrometheus(fixture.report));
  EXPECT_EQ("2", samples.at("orthanc_ingest_instances_by_sop_class_total{sop_class=\"(none)\",outcome=\"stored\"}"));
  EXPECT_EQ("2", samples.at("orthanc_ingest_server_total_seconds_by_sop_class_count{sop_class=\"(none)\"}"));
  EXPECT_EQ(0u, samples.count("orthanc_ingest_instances_by_remote_aet_total{remote_aet=\"CT01\",outcome=\"stored\"}"));
  for (const auto& sample : samples)
  {
    EXPECT_EQ(std::string::npos, sample.first.find("association_gap_seconds_by_sop_class")) << sample.first;
  }
}


TEST(PrometheusExporter, PrometheusLabelsAreLabelNames)
{
  Configuration configuration;
  EXPECT_EQ((1u << static_cast<unsigned>(LabelDimension::RemoteAet)) |
              (1u << static_cast<unsigned>(LabelDimension::RemoteIp)),
            PrometheusLabelsOf(configuration));
  for (const char* wrong : {"remoteAET", "transport", "remote_aet", ""})
  {
    configuration.prometheusLabels = {"sopClass", wrong};
    try
    {
      PrometheusLabelsOf(configuration);
      ADD_FAILURE() << wrong;
    }
    catch (const ConfigurationError& e)
    {
      EXPECT_NE(std::string::npos, std::string(e.what()).find("IngestPerf.PrometheusLabels: expected label names "
                                                              "among remoteAet"))
        << e.what();
    }
  }
}


TEST(PrometheusExporter, HashedPeersNeverShowTheValue)
{
  Fixture fixture;
  fixture.status.configuration.hashPeers = true;
  fixture.AddStream(Transport::Dicom, "SECRET01", {kMs}, 1);
  const std::string text = ExportPrometheus(fixture.report);
  EXPECT_EQ(std::string::npos, text.find("SECRET01"));
  EXPECT_EQ(std::string::npos, text.find("10.0.0.7"));
  EXPECT_NE(std::string::npos, text.find("remote_aet=\"" + PeerPseudonym("aet", "SECRET01") + "\""));
}


TEST(PrometheusExporter, DisabledPluginSaysSoAndNothingElse)
{
  PluginStatus status;
  status.state = PluginState::Disabled;
  IngestReport report;
  report.status = &status;
  const std::string text = ExportPrometheus(report);
  EXPECT_EQ(0u, text.rfind("# HELP orthanc_ingest_up ", 0));
  const auto samples = Samples(text);
  EXPECT_EQ((std::map<std::string, std::string>{{"orthanc_ingest_up", "0"},
                                                {"orthanc_ingest_plugin_state{state=\"running\"}", "0"},
                                                {"orthanc_ingest_plugin_state{state=\"disabled\"}", "1"},
                                                {"orthanc_ingest_plugin_state{state=\"inert\"}", "0"}}),
            samples);
  status.state = PluginState::Inert;
  EXPECT_EQ("1", Samples(ExportPrometheus(report)).at("orthanc_ingest_plugin_state{state=\"inert\"}"));
}


// The per-transport histograms: only the phases measured in the running mode, from a transport's
// first instance; the idle answer is small.
TEST(PrometheusExporter, OnlyWhatCanBeMeasured)
{
  Fixture fixture;
  fixture.status.hooks.receivedInstance.Set(ReceivedInstanceHook::State::Held);
  fixture.status.hooks.transcoder.registered = false;
  fixture.status.storage.active = false;
  const std::string idle = ExportPrometheus(fixture.report);
  EXPECT_EQ(std::string::npos, idle.find("orthanc_ingest_phase_duration_seconds_bucket")) << idle;
  EXPECT_LT(idle.size(), 30u * 1024);

  fixture.AddStream(Transport::Dicom, "CT01", {kMs}, 1);
  fixture.AddStream(Transport::Rest, nullptr, {kMs}, 1);
  const auto samples = Samples(ExportPrometheus(fixture.report));
  const auto has = [&samples](const char* transport, const char* phase) {
    return samples.count(std::string("orthanc_ingest_phase_seconds_count{transport=\"") + transport + "\",phase=\"" +
                         phase + "\"}") == 1;
  };
  EXPECT_TRUE(has("dicom", "serverTotal") && has("dicom", "associationGap") && has("dicom", "preStore"));
  EXPECT_TRUE(has("rest", "receive") && has("rest", "persist") && has("rest", "changeDispatch"));
  EXPECT_FALSE(has("dicom", "receive"));        // DCMTK reads the dataset before any hook
  EXPECT_FALSE(has("rest", "associationGap"));  // C-STORE only
  EXPECT_FALSE(has("rest", "storageWrite"));    // the timed storage is off
  // Buckets for the whole store and the gaps only.
  EXPECT_EQ(1u,
            samples.count("orthanc_ingest_phase_duration_seconds_count{transport=\"dicom\",phase=\"serverTotal\"}"));
  EXPECT_EQ(1u,
            samples.count("orthanc_ingest_phase_duration_seconds_count{transport=\"dicom\",phase=\"associationGap\"}"));
  EXPECT_EQ(0u, samples.count("orthanc_ingest_phase_duration_seconds_count{transport=\"dicom\",phase=\"preStore\"}"));
  EXPECT_FALSE(has("rest", "transcode"));      // no transcoder registered
  EXPECT_FALSE(has("rest", "otherOnStored"));  // no plugin is loaded after this one
  EXPECT_FALSE(has("job", "serverTotal"));     // no instance by a job yet
  // Counters stay complete from the start, zeros included: rate() and alerts need them.
  EXPECT_EQ("0", samples.at("orthanc_ingest_instances_total{transport=\"job\",outcome=\"failed\"}"));

  fixture.status.storage.active = true;
  EXPECT_NE(std::string::npos, ExportPrometheus(fixture.report).find("transport=\"rest\",phase=\"storageWrite\""));
}


TEST(PrometheusExporter, TheDiagnosisOneSeriesPerRule)
{
  Fixture fixture;
  Diagnosis diagnosis;
  for (const char* id : {"stores-failing", "cstore-answer-stall", "compressed-answers", "slow-storage"})
  {
    diagnosis.checks.push_back(RuleCheck{id, false, ""});
  }
  Finding stall;
  stall.id = "cstore-answer-stall";
  stall.costMsPerInstance = 86.578;
  Finding compressed;
  compressed.id = "compressed-answers";
  compressed.costKind = CostKind::Unobservable;
  diagnosis.findings = {stall, compressed};
  const auto samples = Samples(ExportPrometheus(fixture.report, &diagnosis));
  EXPECT_EQ("1", samples.at("orthanc_ingest_diagnosis_finding_rank{rule=\"cstore-answer-stall\"}"));
  EXPECT_EQ("2", samples.at("orthanc_ingest_diagnosis_finding_rank{rule=\"compressed-answers\"}"));
  EXPECT_EQ("0", samples.at("orthanc_ingest_diagnosis_finding_rank{rule=\"slow-storage\"}"));
  EXPECT_EQ("0.086578", samples.at("orthanc_ingest_diagnosis_finding_cost_seconds{rule=\"cstore-answer-stall\"}"));
  EXPECT_EQ("0", samples.at("orthanc_ingest_diagnosis_finding_cost_seconds{rule=\"compressed-answers\"}"));
  EXPECT_EQ("0", samples.at("orthanc_ingest_diagnosis_finding_cost_seconds{rule=\"stores-failing\"}"));
  // Without a diagnosis, no such family.
  EXPECT_EQ(std::string::npos, ExportPrometheus(fixture.report).find("orthanc_ingest_diagnosis"));
}


// Every table full, at the defaults: MaxStreams (128) label sets over all four transports, each label
// at MaxLabelValues (32) values as long as they come (16-character AETs, IPv6 addresses, the longest
// UIDs of the standard), every phase measured and split, three outcomes per label set. The answer
// stays under 100 KB: per-transport histograms and sums, per-sender counters and sums.
TEST(PrometheusExporter, WithEveryTableFullTheAnswerStaysUnder100KB)
{
  LabelCatalog catalog(32);
  PluginStatus status;  // every hook held: every phase a transport can have is measured
  status.storage.active = true;
  status.hooks.transcoder.registered = true;
  status.hooks.httpRequestFilter.registered = true;
  status.hooks.receivedInstance.Set(ReceivedInstanceHook::State::Held);
  status.laterPlugins.SetFilter(LaterPluginsHooks::State::Registered);
  status.laterPlugins.SetStored(LaterPluginsHooks::State::Registered);
  status.configuration.phasePartsSampling = 1;
  IngestReport report;
  report.status = &status;
  report.collected = true;
  report.catalog = &catalog;
  std::vector<int64_t> values;
  for (int64_t ms = 1; ms < 30000; ms *= 3)
  {
    values.push_back(ms * kMs);
  }
  // The longest UIDs the standard defines: the values that can leave the plugin (LabelExposure).
  std::vector<std::string> sopClasses(kSopClassUids, kSopClassUids + kSopClassUidsCount);
  std::vector<std::string> syntaxes(kTransferSyntaxUids, kTransferSyntaxUids + kTransferSyntaxUidsCount);
  for (auto* uids : {&sopClasses, &syntaxes})
  {
    std::stable_sort(uids->begin(), uids->end(),
                     [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
    uids->resize(32);
  }
  // Half the label sets by C-STORE (32 calling AETs), half by HTTP, DICOMweb and jobs (no calling AET,
  // no association, gaps between requests instead), from 32 addresses.
  for (size_t i = 0; i < 128; i++)
  {
    const bool dicom = i < 64;
    const Transport transport = dicom        ? Transport::Dicom
                                : i % 4 == 2 ? Transport::Plugin
                                : i % 4 == 3 ? Transport::Job
                                             : Transport::Rest;
    char aet[17], ip[40];
    std::snprintf(aet, sizeof(aet), "MODALITY_ROOM%03zu", i % 32);
    std::snprintf(ip, sizeof(ip), "2001:0db8:85a3:0000:0000:8a2e:0370:%04zu", (i * 7) % 32);
    RawLabels raw;
    raw.remoteAet = dicom ? aet : nullptr;
    raw.remoteIp = ip;
    raw.calledAet = dicom ? "ORTHANC" : nullptr;
    raw.sopClass = sopClasses[(i * 3) % 32].c_str();
    raw.receivedSyntax = syntaxes[(i * 5) % 32].c_str();
    raw.storedSyntax = raw.receivedSyntax;
    TransportSnapshot snapshot;
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      const Phase phase = static_cast<Phase>(p);
      if (phase != (dicom ? Phase::RequestGap : Phase::AssociationGap))
      {
        snapshot.phases[p] = SnapshotOf(values);
      }
    }
    snapshot.outcomes[static_cast<size_t>(Outcome::Stored)] = 10;
    snapshot.outcomes[static_cast<size_t>(Outcome::AlreadyStored)] = 2;
    snapshot.outcomes[static_cast<size_t>(Outcome::Failed)] = 1;
    report.eachStream.emplace_back(catalog.Intern(transport, raw, 1000), snapshot);
    report.snapshot.transports[static_cast<size_t>(transport)].Merge(snapshot);
  }
  Diagnosis diagnosis;  // one series per rule, as /perf/metrics gives them
  for (const std::string& id : DiagnosisRuleIds())
  {
    diagnosis.checks.push_back(RuleCheck{id, false, ""});
  }
  const std::string text = ExportPrometheus(report, &diagnosis);
  std::printf("GET /perf/metrics, every table full: %zu bytes\n", text.size());
  if (const char* dump = std::getenv("INGEST_PERF_DUMP_METRICS"))
  {
    FILE* file = std::fopen(dump, "w");
    std::fwrite(text.data(), 1, text.size(), file);
    std::fclose(file);
  }
  EXPECT_LE(text.size(), 100000u);  // issue 35: at most 100 KB
  // Every label value made it, under each of its transports.
  EXPECT_NE(std::string::npos, text.find("remote_aet=\"MODALITY_ROOM031\""));
  EXPECT_NE(std::string::npos, text.find("remote_ip=\"2001:0db8:85a3:0000:0000:8a2e:0370:0031\""));
  EXPECT_EQ(std::string::npos, text.find("sop_class="));  // in /perf/stats?groupBy=sopClass
}
