// Diagnosis -> the JSON document of GET /perf/diagnosis: the verdict in one line, the findings
// (most costly first) with their evidence and fix, a short summary per transport, and every rule
// with why it fired or not. Schema in docs/diagnosis.md. The one place a finding (plain data: its
// Evidence and Fix) becomes JSON. Knows nothing of Orthanc.
#pragma once

#include "Diagnosis/DiagnosisRules.h"

#include <json/value.h>

#include <string>

namespace IngestPerf
{
  // The verdict when no instance was stored in the window: how many were stored since the reset, and
  // when the last of them ("No instance stored in the last 5 minutes; 500 stored since ..., the last at ...").
  std::string NothingStored(const DiagnosisInput& input);

  Json::Value ExportDiagnosis(const Diagnosis& diagnosis, const DiagnosisInput& input, const PluginStatus& status);
}
