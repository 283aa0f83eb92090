// The Orthanc callbacks on the ingest path. Each one takes a timestamp, reads what it needs from
// Orthanc without copying, hands an event to this thread's InstanceTimeline, and always returns
// the answer that lets the ingest go on unchanged. An exception is counted, never propagated.
#pragma once

#include "Platform/PluginStatus.h"

#include "Labels/LabelExposure.h"  // kUnknownLabel
#include "Platform/Configuration.h"
#include "Platform/ThreadClocks.h"
#include "Timeline/InstanceTimeline.h"

#include <string>

namespace IngestPerf
{
  // Why the transcoder is not registered although IngestTranscoding is configured.
  extern const char* const kTranscoderOffReason;
  // Why the plugin never registers a C-STORE filter.
  extern const char* const kCStoreFilterReason;

  // Registers every ingest hook the configuration asks for, at start-up; the ReceivedInstanceCallback,
  // which only one plugin may hold, is left for RegisterLateHooks. The second instance filter and
  // OnStored are registered at the first instance where `later` says Waiting (its states are set
  // there); `later` and the ingest state must outlive Orthanc's use of the callbacks (the whole plugin
  // lifetime).
  HookRegistrations RegisterIngestHooks(const Configuration& configuration, LaterPluginsHooks& later);

  // Once Orthanc has started (every plugin has loaded), from the plugin's own thread: takes the
  // ReceivedInstanceCallback if it was asked for (state Waiting), and says whether Orthanc let it.
  void RegisterLateHooks(ReceivedInstanceHook& receivedInstance);

  // The calling thread's clocks if its timeline wants them at `event` (one instance in
  // IngestPerf.PhasePartsSampling), else an unknown reading: two system calls, or none.
  ThreadClockReading ClocksIfDue(InstanceTimeline& timeline, TimelineEvent event, bool ingestRoute = true);

  // Pure helpers of the hooks, exposed for the unit tests.
  bool HasPart10Header(const void* buffer, uint64_t size);
  bool IsIngestRoute(const char* uri, bool& isDicomWeb);
  // Orthanc 1.10.1's rule: the comma-separated, trimmed Accept-Encoding tokens include exactly
  // "gzip" or "deflate" (so "gzip;q=1" does not count).
  bool AcceptsCompression(uint32_t headersCount, const char* const* keys, const char* const* values);
}
