// IngestReport -> the Prometheus text exposition (format 0.0.4) of GET /perf/metrics: classic
// histograms in seconds, counters of instances and bytes, gauges of what is open now. The metric
// names, the `le` ladder and the queries are documented in docs/prometheus.md. Knows nothing of
// Orthanc.
#pragma once

#include "Diagnosis/DiagnosisRules.h"
#include "Export/PrometheusText.h"
#include "Platform/MappedText.h"
#include "Recording/IngestReport.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace IngestPerf
{
  constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4";


  const std::vector<PrometheusBucketBound>& PrometheusLadder();
  // The phases of the labelled streams that the per-label figures sum (serverTotal and associationGap;
  // the per-transport histograms export every phase).
  bool IsPerStreamPhase(Phase phase);

  // Into the answer's own pages (the route's); the same text as a string (the tests').
  // `diagnosis`: GET /perf/diagnosis's, exported one series per rule; none without it.
  void ExportPrometheus(const IngestReport& report, MappedText& text, const Diagnosis* diagnosis = nullptr);
  std::string ExportPrometheus(const IngestReport& report, const Diagnosis* diagnosis = nullptr);

  // The labels of IngestPerf.PrometheusLabels (bit d: LabelDimension d). Throws ConfigurationError
  // for a name that is not a label of docs/labels.md (or is "transport", whose figures are always
  // there): checked at start-up, where a bad value leaves the plugin inert with the reason.
  uint32_t PrometheusLabelsOf(const Configuration& configuration);

  // The label of docs/labels.md in Prometheus' snake_case: remoteAet -> remote_aet.
  std::string PrometheusLabelName(LabelDimension dimension);

  // A label value as the format wants it: backslash, double quote and line feed escaped.
  std::string EscapePrometheusLabelValue(const std::string& value);

  // Whole nanoseconds as seconds, exactly: "0.000999423", "12", "0".
  std::string NanosecondsToSecondsText(uint64_t ns);
}
