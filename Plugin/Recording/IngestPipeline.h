// The objects of one data flow, built together from the configuration: per-thread timelines, the
// recorder with its correlation tables, and the aggregate. The entry point, the tests and the
// benchmarks build the same pipeline.
#pragma once

#include "Correlation/AssociationTracker.h"
#include "Correlation/ChangeCorrelator.h"
#include "Correlation/ChangeQueueStats.h"
#include "Host/Configuration.h"
#include "Recording/IngestRecorder.h"
#include "Metrics/IngestStats.h"
#include "Labels/LabelCatalog.h"
#include "Metrics/PluginCost.h"
#include "Metrics/StorageStats.h"
#include "Timeline/ThreadTimelines.h"

namespace IngestPerf
{
  struct IngestPipeline
  {
    explicit IngestPipeline(const Configuration& configuration);

    ThreadTimelines timelines;
    LabelCatalog labels;
    ChangeCorrelator correlator;
    AssociationTracker associations;
    IngestStats stats;
    StorageStats storage;
    ChangeQueueStats changes;
    PluginCost cost;
    IngestRecorder recorder;
  };
}
