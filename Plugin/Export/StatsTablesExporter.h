// The sections of /perf/stats about the plugin itself rather than the figures: what the
// configuration asked for and does not have, the hooks it holds and those of the plugins loaded
// after it, what no plugin can observe; and its own tables: the C-STORE associations and the
// connections open now, the change queue, the plugin's cost, the storage area's operations and the
// label tables. Parts of the document JsonExporter writes (WriteStats).
#pragma once

#include "Platform/Configuration.h"
#include "Platform/JsonText.h"
#include "Platform/PluginStatus.h"
#include "Recording/IngestReport.h"

#include <array>

namespace IngestPerf
{
  void WriteAssociations(JsonWriter& out, const AssociationsView& view, const LabelCatalog& catalog,
                         const Configuration& configuration);
  // `all`: every transport since the reset, for the per-instance figures.
  void WriteChanges(JsonWriter& out, const ChangeQueueSnapshot& changes, const TransportSnapshot& all);
  void WritePluginCost(JsonWriter& out, const PluginCostSnapshot& cost, const TransportSnapshot& all);
  // operations: null when nothing was collected (the plugin is inert).
  void WriteStorage(JsonWriter& out, const PluginStatus& status,
                    const std::array<StorageOperationSnapshot, kStorageOperationCount>* operations);
  void WriteLabels(JsonWriter& out, const LabelCatalog& catalog, const StreamInfo& info, bool hashPeers);

  // First in every answer: an option that silently did nothing misleads a reader.
  void WriteNotInEffect(JsonWriter& out, const PluginStatus& status);
  void WriteHook(JsonWriter& out, const char* name, const HookState& hook);
  void WriteOtherPlugins(JsonWriter& out, const LaterPluginsHooks& later);
  void WriteUnobservableSteps(JsonWriter& out, const PluginStatus& status);
}
