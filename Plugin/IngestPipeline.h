// The objects of one data flow, built together from the configuration: per-thread timelines, the
// recorder with its correlation tables, and the aggregate. The entry point, the tests and the
// benchmarks build the same pipeline.
#pragma once

#include "AssociationTracker.h"
#include "ChangeCorrelator.h"
#include "ChangeQueueStats.h"
#include "Configuration.h"
#include "IngestRecorder.h"
#include "IngestStats.h"
#include "LabelCatalog.h"
#include "PluginCost.h"
#include "StorageStats.h"
#include "ThreadTimelines.h"

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
