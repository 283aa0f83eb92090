#include "Recording/IngestPipeline.h"

#include "Timeline/MonotonicClock.h"

namespace IngestPerf
{
  IngestPipeline::IngestPipeline(const Configuration& configuration) :
    timelines(configuration.maxThreads),
    labels(configuration.maxLabelValues),
    correlator(configuration.changeTableSize),
    associations(configuration.maxPeers, static_cast<int64_t>(configuration.dicomScpTimeoutSeconds) * 1000000000),
    stats(MonotonicNowNs(), WallNowNs(), configuration.maxSeries),
    recorder(stats, labels, correlator, associations, changes, configuration.overwriteInstances)
  {
  }
}
