// The plugin's own work per hook and per instance, without Orthanc: what each callback adds to
// Orthanc's ingest path (Orthanc's SDK calls made by the hooks are not included).
#include "IngestPipeline.h"
#include "MonotonicClock.h"
#include "PhaseHistogram.h"

#include <benchmark/benchmark.h>

using namespace IngestPerf;

namespace
{
  IngestPipeline& SharedPipeline()
  {
    static IngestPipeline pipeline{Configuration()};  // the defaults
    return pipeline;
  }
}  // namespace


static void BM_HistogramRecord(benchmark::State& state)
{
  PhaseHistogram histogram{};
  int64_t value = 1000;
  for (auto _ : state)
  {
    histogram.Record(value);
    value = (value * 7 + 13) & 0xffffff;
  }
}
BENCHMARK(BM_HistogramRecord)->ThreadRange(1, 2);


static void BM_ClockRead(benchmark::State& state)
{
  for (auto _ : state)
  {
    benchmark::DoNotOptimize(MonotonicNowNs());
  }
}
BENCHMARK(BM_ClockRead);


static void BM_OneEvent_Filtered(benchmark::State& state)
{
  IngestPipeline& pipeline = SharedPipeline();
  InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
  timeline.Received(MonotonicNowNs(), Transport::Rest, 1000, true, nullptr, pipeline.recorder);
  for (auto _ : state)
  {
    pipeline.timelines.ForCurrentThread().Filtered(MonotonicNowNs(), Transport::Rest, true, pipeline.recorder);
  }
}
BENCHMARK(BM_OneEvent_Filtered);


static void BM_FullInstance_Http(benchmark::State& state)
{
  IngestPipeline& pipeline = SharedPipeline();
  uint64_t key = 1;
  for (auto _ : state)
  {
    InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
    timeline.HttpRequest(MonotonicNowNs(), true, true, Transport::Rest, pipeline.recorder);
    pipeline.timelines.ForCurrentThread().Received(MonotonicNowNs(), Transport::Rest, 525000, true,
                                                   "1.2.840.10008.1.2.1", pipeline.recorder);
    pipeline.timelines.ForCurrentThread().Filtered(MonotonicNowNs(), Transport::Rest, false, pipeline.recorder);
    StoredEvent event{};
    event.nowNs = MonotonicNowNs();
    event.wallNowNs = WallNowNs();
    event.transport = Transport::Rest;
    event.storedBytes = 525000;
    event.instanceKey = key++;
    event.receptionSecond = event.wallNowNs / 1000000000;
    event.labels.remoteIp = "127.0.0.1";
    event.labels.storedSyntax = "1.2.840.10008.1.2.1";
    event.labels.sopClass = "1.2.840.10008.5.1.4.1.1.2";
    pipeline.timelines.ForCurrentThread().Stored(event, pipeline.recorder);
    pipeline.recorder.NewInstanceChange(event.instanceKey, MonotonicNowNs());
  }
}
BENCHMARK(BM_FullInstance_Http)->ThreadRange(1, 2);
