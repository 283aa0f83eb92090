// What the plugin cannot observe, and why: the one source of every "unobservable" reason that
// /perf/stats, the report and the docs give. Some steps no plugin can see in any Orthanc; some
// phases need a hook or an option this run does not have.
#pragma once

#include "Platform/PluginStatus.h"
#include "Vocabulary/IngestVocabulary.h"

#include <vector>

namespace IngestPerf
{
  // Why the REST answer (compression and send) cannot be timed in any Orthanc up to 1.13.0.
  extern const char* const kRestAnswerUnobservable;

  // Why `phase` is not measured, for one transport (or for all when `transport` is null), in this
  // run; nullptr when it is measured.
  const char* PhaseUnobservableReason(const PluginStatus& status, const Transport* transport, Phase phase);

  // Why the parts of `phase` (on a CPU, waiting for one, blocked) are not known in this run, nullptr
  // when they are (for the instances sampled).
  const char* PhasePartsUnobservableReason(const PluginStatus& status, Phase phase);
  // Why the run delay (waitingForCpu) is not known on this host, nullptr when it is: it is then
  // counted in blocked.
  const char* RunDelayUnobservableReason();

  // Steps of an ingest outside every phase: no hook of any Orthanc marks them.
  struct UnobservableStep
  {
    const char* what;
    const char* transport;
    const char* reason;
  };
  std::vector<UnobservableStep> UnobservableSteps(const PluginStatus& status);
}
