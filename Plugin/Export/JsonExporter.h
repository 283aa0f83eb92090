// StatsSnapshot -> the JSON document of GET /perf/stats. Durations in milliseconds, sizes in
// bytes, rates per second; the schema is documented in the README.
#pragma once

#include "Metrics/IngestVocabulary.h"
#include "Metrics/IngestStats.h"
#include "Labels/LabelCatalog.h"
#include "Host/PluginStatus.h"
#include "Correlation/AssociationTracker.h"
#include "Correlation/ChangeQueueStats.h"
#include "Capture/OpenConnections.h"
#include "Metrics/PluginCost.h"
#include "Metrics/StorageStats.h"
#include "Metrics/StatsSnapshot.h"
#include "Timeline/ThreadTimelines.h"

#include <json/value.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace IngestPerf
{
  struct ExportFilter
  {
    enum class Scope
    {
      Every,      // each transport, then "all"
      Single,     // only `transport`
      MergedOnly  // only "all"
    };
    Scope scope = Scope::Every;
    Transport transport = Transport::Rest;

    // Label filters other than transport (exact values, "(other)" and "(none)" included), and
    // the dimension to group by. Either one switches to the labelled series.
    std::vector<std::pair<LabelDimension, std::string>> labels;
    bool hasGroupBy = false;
    LabelDimension groupBy = LabelDimension::Transport;

    bool UsesSeries() const { return !labels.empty() || hasGroupBy; }
  };

  struct SeriesInfo
  {
    size_t capacity = 0;
    size_t used = 0;
    uint64_t overflowed = 0;
    size_t bytesPerSeries = 0;
  };

  struct AssociationsView
  {
    std::vector<PeerAssociations> peers;
    OpenConnections connections;
    std::vector<std::pair<InstanceLabels, HistogramSnapshot>> gaps;  // associationGap per C-STORE series
  };

  struct ExportInput
  {
    const StatsSnapshot& snapshot;
    const OpenRecords& openRecords;
    const PluginStatus& status;
    uint64_t correlationSkipped;
    uint64_t associationSkipped;
    const LabelCatalog* catalog;  // null when the plugin is disabled
    SeriesInfo seriesInfo;
    const GroupedSnapshot* grouped;  // the matching series, when filter.UsesSeries()
    const std::array<StorageOperationSnapshot, kStorageOperationCount>* storage;  // null when disabled
    const AssociationsView* associations;                                         // idem
    const ChangeQueueSnapshot* changes;                                           // idem
    const std::array<HistogramSnapshot, kCallbackCount>* pluginCost;              // idem
  };

  // Which labelled series a filter selects (transport scope and label filters).
  std::function<bool(const InstanceLabels&)> MakeSeriesPredicate(const ExportFilter& filter,
                                                                 const LabelCatalog& catalog);
  // The label a filter groups by, nullptr for none.
  inline const LabelDimension* GroupByOf(const ExportFilter& filter)
  {
    return filter.hasGroupBy ? &filter.groupBy : nullptr;
  }

  Json::Value ExportStats(const ExportInput& input, const ExportFilter& filter);

  // Milliseconds with 0.1 microsecond resolution.
  double NanosecondsToMilliseconds(int64_t ns);

  Json::Value ExportHistogram(const HistogramSnapshot& histogram, bool durations);
}
