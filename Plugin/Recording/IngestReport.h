// The named report a reader gets from IngestState::Collect: plain copies of everything the
// aggregate, the correlation tables and the host status hold, taken without changing any of them.
// Exporters turn it into documents and know nothing else.
#pragma once

#include "Correlation/AssociationTracker.h"
#include "Correlation/ChangeQueueStats.h"
#include "Correlation/DicomConnections.h"
#include "Labels/LabelCatalog.h"
#include "Metrics/IngestStats.h"
#include "Metrics/PluginCost.h"
#include "Metrics/RecentInstances.h"
#include "Metrics/StatsSnapshot.h"
#include "Metrics/StorageStats.h"
#include "Metrics/TimeWindows.h"
#include "Platform/PluginStatus.h"
#include "Timeline/ThreadTimelines.h"

#include <array>
#include <utility>
#include <vector>

namespace IngestPerf
{
  struct StreamInfo
  {
    size_t capacity = 0;
    size_t used = 0;
    uint64_t overflowed = 0;
    size_t bytesEach = 0;
    // The label values aged out since the reset (LabelCatalog::Rotate), the streams folded into
    // "(other)" then, and how long ago the last time was (-1: never).
    uint64_t rotations = 0;
    uint64_t folded = 0;
    int64_t lastRotationAgoNs = -1;
  };

  struct AssociationsView
  {
    std::vector<PeerAssociations> peers;
    // Orthanc's DICOM connections, open and recently closed, as of connectionsReadNs (0: never read).
    std::vector<DicomConnection> connections;
    int64_t connectionsReadNs = 0;
    std::vector<std::pair<InstanceLabels, HistogramSnapshot>> gaps;  // associationGap per C-STORE stream
  };

  struct IngestReport
  {
    const PluginStatus* status = nullptr;
    // False when the plugin is not running (disabled, or it could not start): then only the
    // status and an empty snapshot are meaningful.
    bool collected = false;
    StatsSnapshot snapshot;
    OpenRecords openRecords;
    uint64_t correlationSkipped = 0;
    uint64_t correlationEvicted = 0;  // pairings lost to a full change table
    uint64_t associationSkipped = 0;
    const LabelCatalog* catalog = nullptr;  // names of label ids; the ingest state's, null when not collected
    StreamInfo streams;
    GroupedSnapshot grouped;     // the matching streams, when the query uses them
    StreamSnapshots eachStream;  // when the query asks for it
    bool windowsKept = false;
    WindowSnapshot window;                 // the query's window, when it has one
    std::array<WindowSnapshot, 2> recent;  // 1m and 5m, for the answer without window or labels
    std::array<StorageOperationSnapshot, kStorageOperationCount> storage;
    AssociationsView associations;
    // The streams with failed instances: outcomes and counters only (who fails, and why).
    std::vector<std::pair<InstanceLabels, TransportSnapshot>> failingStreams;
    ChangeQueueSnapshot changes;
    PluginCostSnapshot pluginCost;  // the watcher's part filled by the route (RestRoutes), the rest by Collect
    uint64_t failedAnswers = 0;     // REST answers turned into a 500 or 503 since Orthanc started
  };

  // What IngestState::CollectSlowest and CollectRecent give the /perf/slowest and /perf/trace
  // exporters: copies of the ring's records, and where the clocks stood when they were taken.
  struct RecentReport
  {
    bool collected = false;  // false when the plugin is not running
    RecentSnapshot ring;     // instances: the selected ones (slowest first, or oldest first)
    uint64_t matched = 0;    // instances in the window that match the query (before keeping `count`)
    int64_t nowNs = 0;       // monotonic
    int64_t nowWallNs = 0;   // UTC epoch ns
    const LabelCatalog* catalog = nullptr;
  };

  // What IngestState::CollectSlots gives the /perf/slots exporter: one window slot by slot,
  // and where the clocks stood when it was read (to put the slots on UTC).
  struct SlotsReport
  {
    bool collected = false;  // false when the plugin is not running
    bool windowsKept = false;
    WindowSlots window;
    int64_t nowNs = 0;      // monotonic
    int64_t nowWallNs = 0;  // UTC epoch ns
  };
}
