#include "IngestPipeline.h"

#include "MonotonicClock.h"

namespace IngestPerf
{
  IngestPipeline::IngestPipeline(const Configuration& configuration) :
    timelines(configuration.maxThreads),
    correlator(configuration.changeTableSize),
    associations(configuration.maxPeers, static_cast<int64_t>(configuration.dicomScpTimeoutSeconds) * 1000000000),
    stats(MonotonicNowNs(), WallNowNs()),
    recorder(stats, correlator, associations, configuration.overwriteInstances)
  {
  }
}
