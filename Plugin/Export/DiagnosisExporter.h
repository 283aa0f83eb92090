// Diagnosis -> the JSON document of GET /perf/diagnosis: the verdict in one line, the findings
// (most costly first) with their evidence and fix, a short summary per transport, and every rule
// with why it fired or not. Schema in docs/diagnosis.md. Knows nothing of Orthanc.
#pragma once

#include "Diagnosis/DiagnosisRules.h"

#include <json/value.h>

namespace IngestPerf
{
  Json::Value ExportDiagnosis(const Diagnosis& diagnosis, const DiagnosisInput& input, const PluginStatus& status);
}
