// The plugin's own work, without Orthanc: what each callback adds to Orthanc's ingest path (the
// Orthanc SDK calls the hooks make are not included; /perf/stats "pluginCost" measures them in a
// running Orthanc), and the cost of answering /perf/stats.
// Targets (issue 4): <= 100 ns per recorded event, <= 1 us per instance, /perf/stats <= 5 ms with
// every label limit reached.
#include "Correlation/IngestWatcher.h"
#include "Correlation/ProcessSockets.h"
#include "Diagnosis/DiagnosisRules.h"
#include "Export/DiagnosisExporter.h"
#include "Export/JsonExporter.h"
#include "Export/PrometheusExporter.h"
#include "Export/SlowestExporter.h"
#include "Export/TraceExporter.h"
#include "Metrics/Histogram.h"
#include "Metrics/IngestStats.h"
#include "Metrics/TimeWindows.h"
#include "Platform/BoundedSpinLock.h"
#include "Platform/JsonText.h"
#include "Platform/MonotonicClock.h"
#include "Platform/ThreadClocks.h"
#include "Recording/IngestState.h"
#include "Rest/RestRoutes.h"

#include <benchmark/benchmark.h>

#include <json/writer.h>

#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  IngestState& SharedPipeline()
  {
    static IngestState pipeline{Configuration()};  // the defaults
    return pipeline;
  }

  StoredEvent Stored(Transport transport, uint64_t key, const RawLabels& labels)
  {
    StoredEvent event{};
    event.nowNs = MonotonicNowNs();
    event.wallNowNs = WallNowNs();
    event.transport = transport;
    event.storedBytes = 525000;
    event.instanceKey = key;
    event.receptionSecond = event.wallNowNs / 1000000000 + 2;
    event.labels = labels;
    return event;
  }

  // What IngestHooks' wrapper adds around every callback's work: the entry timestamp (passed to
  // the work) and, for one call in PluginCost::kSamplingPeriod, the return timestamp and the record
  // of the plugin's own cost.
  template <typename Work>
  void Hook(IngestState& pipeline, Callback callback, Work work)
  {
    const int64_t entry = MonotonicNowNs();
    work(entry);
    if (PluginCost::SampleThisCall())
    {
      pipeline.cost.Record(callback, MonotonicNowNs() - entry);
    }
  }

  constexpr uint32_t kNewInstanceChange = 3;  // OrthancPluginChangeType_NewInstance

  RawLabels TypicalLabels()
  {
    RawLabels labels;
    labels.remoteIp = "127.0.0.1";
    labels.storedSyntax = "1.2.840.10008.1.2.1";
    labels.sopClass = "1.2.840.10008.5.1.4.1.1.2";
    return labels;
  }
}


static void BM_ClockRead(benchmark::State& state)
{
  for (auto _ : state)
  {
    benchmark::DoNotOptimize(MonotonicNowNs());
  }
}
BENCHMARK(BM_ClockRead);


// One reading of the thread's clocks at a bound of a split instance's phases (Platform/ThreadClocks):
// the CPU clock (a system call) and the run delay (open, read and close /proc/thread-self/schedstat).
// Wall time and the thread's CPU time, kernel included: what it adds to pluginCost per reading.
static void BM_ThreadClocksRead(benchmark::State& state)
{
  ThreadClockReading reading;
  const int64_t cpuStart = ThreadCpuNowNs();
  for (auto _ : state)
  {
    ReadThreadClocks(reading);
    benchmark::DoNotOptimize(reading);
  }
  state.counters["cpuNsPerReading"] =
    static_cast<double>(ThreadCpuNowNs() - cpuStart) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_ThreadClocksRead);


// One hook's work: timestamp, find this thread's timeline, record the event.
static void BM_OneEvent(benchmark::State& state)
{
  IngestState& pipeline = SharedPipeline();
  pipeline.timelines.ForCurrentThread().Received(MonotonicNowNs(), Transport::Rest, 1000, true, nullptr,
                                                 pipeline.recorder);
  for (auto _ : state)
  {
    Hook(pipeline, Callback::Transcoder,
         [&](int64_t now) { pipeline.timelines.ForCurrentThread().TranscodeStarted(now); });
  }
}
BENCHMARK(BM_OneEvent);


// Every hook of one HTTP instance, the NewInstance change included.
static void BM_FullInstance_Http(benchmark::State& state)
{
  IngestState& pipeline = SharedPipeline();
  const RawLabels labels = TypicalLabels();
  uint64_t key = 1;
  for (auto _ : state)
  {
    Hook(pipeline, Callback::HttpRequestFilter, [&](int64_t now) {
      pipeline.timelines.ForCurrentThread().HttpRequest(now, true, true, Transport::Rest, pipeline.recorder);
    });
    Hook(pipeline, Callback::ReceivedInstance, [&](int64_t now) {
      pipeline.timelines.ForCurrentThread().Received(now, Transport::Rest, 525000, true, "1.2.840.10008.1.2.1",
                                                     pipeline.recorder);
    });
    Hook(pipeline, Callback::InstanceFilter,
         [&](int64_t now) { pipeline.timelines.ForCurrentThread().Filtered(now, Transport::Rest, pipeline.recorder); });
    Hook(pipeline, Callback::StoredInstance, [&](int64_t) {
      pipeline.timelines.ForCurrentThread().Stored(Stored(Transport::Rest, key, labels), pipeline.recorder);
    });
    Hook(pipeline, Callback::Change, [&](int64_t now) {
      pipeline.changes.ChangeDelivered(kNewInstanceChange, now, pipeline.recorder.NewInstanceChange(key++, now));
    });
  }
}
BENCHMARK(BM_FullInstance_Http)->ThreadRange(1, 2);


// Every hook of one C-STORE instance (two filters, the association chain).
static void BM_FullInstance_CStore(benchmark::State& state)
{
  IngestState& pipeline = SharedPipeline();
  RawLabels labels = TypicalLabels();
  labels.remoteAet = "MODALITY";
  labels.calledAet = "ORTHANC";
  uint64_t key = uint64_t(1) << 40;
  for (auto _ : state)
  {
    Hook(pipeline, Callback::ReceivedInstance, [&](int64_t now) {
      pipeline.timelines.ForCurrentThread().Received(now, Transport::Dicom, 525000, true, "1.2.840.10008.1.2.1",
                                                     pipeline.recorder);
    });
    Hook(pipeline, Callback::InstanceFilter, [&](int64_t now) {
      pipeline.timelines.ForCurrentThread().Filtered(now, Transport::Dicom, pipeline.recorder);
    });
    Hook(pipeline, Callback::StoredInstance, [&](int64_t) {
      StoredEvent event = Stored(Transport::Dicom, key, labels);
      event.peerKey = 12345;
      pipeline.timelines.ForCurrentThread().Stored(event, pipeline.recorder);
    });
    Hook(pipeline, Callback::Change, [&](int64_t now) {
      pipeline.changes.ChangeDelivered(kNewInstanceChange, now, pipeline.recorder.NewInstanceChange(key++, now));
    });
  }
}
BENCHMARK(BM_FullInstance_CStore);


// The worst state of the tables: every label dictionary (253 values) and the series table (65536
// series, the maxima) full, and every instance brings values never seen (a new calling AET, client
// address and SOP class each time): each lookup ends at its probe limit and in an overflow series.
static void BM_FullInstance_CStore_FullTables(benchmark::State& state)
{
  static IngestState* pipeline = [] {
    Configuration configuration;
    configuration.maxLabelValues = 253;
    configuration.maxStreams = 65536;
    return new IngestState(configuration);
  }();
  static std::vector<std::string> values = [] {
    std::vector<std::string> v;
    for (int i = 0; i < 200000; i++)
    {
      v.push_back(std::to_string(i));
    }
    return v;
  }();
  auto instance = [](uint64_t key, size_t a, size_t b, size_t c) {
    RawLabels labels = TypicalLabels();
    labels.remoteAet = values[a].c_str();
    labels.remoteIp = values[b].c_str();
    labels.sopClass = values[c].c_str();
    labels.calledAet = "ORTHANC";
    InstanceTimeline& timeline = pipeline->timelines.ForCurrentThread();
    timeline.Received(MonotonicNowNs(), Transport::Dicom, 525000, true, "1.2.840.10008.1.2.1", pipeline->recorder);
    timeline.Filtered(MonotonicNowNs(), Transport::Dicom, pipeline->recorder);
    StoredEvent event = Stored(Transport::Dicom, key, labels);
    event.peerKey = key;
    timeline.Stored(event, pipeline->recorder);
  };
  static bool filled = [&] {
    // 253 x 253 label combinations: more than the 65536 series.
    uint64_t key = 1;
    for (size_t a = 0; a < 253; a++)
    {
      for (size_t b = 0; b < 260; b++)
      {
        instance(key++, a, b, 0);
      }
    }
    return true;
  }();
  benchmark::DoNotOptimize(filled);
  uint64_t key = uint64_t(1) << 40;
  size_t next = 1000;
  for (auto _ : state)
  {
    instance(key++, next, next + 1, next + 2);
    next = next + 3 < values.size() ? next + 3 : 1000;
  }
  const StreamTable& table = pipeline->stats.Streams();
  state.counters["seriesUsed"] = static_cast<double>(table.Used());
  state.counters["seriesOverflowed"] = static_cast<double>(table.Overflowed());
}
BENCHMARK(BM_FullInstance_CStore_FullTables);


// How long a thread waits before it gives up a spin lock that another thread holds.
static void BM_SpinLockGiveUp(benchmark::State& state)
{
  std::atomic<bool> held{true};
  for (auto _ : state)
  {
    benchmark::DoNotOptimize(BoundedSpinLock(held));
  }
}
BENCHMARK(BM_SpinLockGiveUp);


namespace
{
  InstanceMeasurement TypicalHttpMeasurement()
  {
    InstanceMeasurement measurement;
    measurement.hasTimeline = true;
    measurement.storedBytes = 525000;
    measurement.receivedBytes = 525000;
    measurement.Set(Phase::Receive, 900000);
    measurement.Set(Phase::PreStore, 250000);
    measurement.Set(Phase::Persist, 4500000);
    measurement.Set(Phase::ServerTotal, 5650000);
    return measurement;
  }
}


// The aggregate's part of one stored HTTP instance and its NewInstance change: the labelled series
// and per-second rates, and with /1 the time windows too (both rings). /0 is the hot path before
// the time windows, /1 after, in the same run.
static void BM_RecordStored_Windows(benchmark::State& state)
{
  static IngestStats withWindows(MonotonicNowNs(), WallNowNs(), 128, MonotonicNowNs);
  static IngestStats withoutWindows(MonotonicNowNs(), WallNowNs(), 128, nullptr);
  IngestStats& stats = state.range(0) != 0 ? withWindows : withoutWindows;
  InstanceMeasurement measurement = TypicalHttpMeasurement();
  InstanceLabels labels;
  labels.SetTransport(Transport::Rest);
  for (auto _ : state)
  {
    measurement.storedNs = MonotonicNowNs();
    stats.RecordStored(measurement, labels);
    stats.RecordPhase(Phase::ChangeDispatch, labels, 150000, measurement.storedNs + 150000);
  }
}
BENCHMARK(BM_RecordStored_Windows)->Arg(0)->Arg(1)->ThreadRange(1, 2);


// The worst case of a window write: every record starts a new 10 s slot (and every sixth a new 60 s
// one), which its writer clears before recording. Once per slot and transport in a real run.
static void BM_WindowSlotClaim(benchmark::State& state)
{
  static TimeWindows windows(0);
  static int64_t now = 0;  // kept across runs: a time already seen would find later epochs and be dropped
  const InstanceMeasurement measurement = TypicalHttpMeasurement();
  for (auto _ : state)
  {
    now += TimeWindows::kFineSlotNs;
    windows.RecordStored(Transport::Rest, now, measurement);
  }
}
BENCHMARK(BM_WindowSlotClaim);


// /perf/stats?window=1h over 60 full slots of every transport (the reader's merge).
static void BM_WindowSnapshot_1h(benchmark::State& state)
{
  static TimeWindows windows(0);
  const InstanceMeasurement measurement = TypicalHttpMeasurement();
  for (int64_t second = 0; second < 3600; second++)
  {
    for (size_t t = 0; t < kTransportCount; t++)
    {
      windows.RecordStored(static_cast<Transport>(t), second * 1000000000, measurement);
    }
  }
  for (auto _ : state)
  {
    benchmark::DoNotOptimize(windows.Snapshot(Window::OneHour, int64_t(3599) * 1000000000));
  }
}
BENCHMARK(BM_WindowSnapshot_1h)->Unit(benchmark::kMicrosecond);


static void BM_HistogramRecord(benchmark::State& state)
{
  static Histogram histogram{};
  int64_t value = 1000;
  for (auto _ : state)
  {
    histogram.Record(value);
    value = (value * 7 + 13) & 0xffffff;
  }
}
BENCHMARK(BM_HistogramRecord)->ThreadRange(1, 2);


static void BM_HistogramSnapshot(benchmark::State& state)
{
  Histogram histogram{};
  std::mt19937_64 random(1);
  std::lognormal_distribution<double> distribution(14.0, 1.5);
  for (int i = 0; i < 100000; i++)
  {
    histogram.Record(static_cast<int64_t>(distribution(random)));
  }
  for (auto _ : state)
  {
    benchmark::DoNotOptimize(histogram.Snapshot());
  }
}
BENCHMARK(BM_HistogramSnapshot);


static void BM_HistogramMerge(benchmark::State& state)
{
  Histogram a{}, b{};
  for (int i = 1; i < 100000; i++)
  {
    a.Record(i * 37);
    b.Record(i * 91);
  }
  const HistogramSnapshot left = a.Snapshot();
  const HistogramSnapshot right = b.Snapshot();
  for (auto _ : state)
  {
    HistogramSnapshot merged = left;
    merged.Merge(right);
    benchmark::DoNotOptimize(merged);
  }
}
BENCHMARK(BM_HistogramMerge);


// Every label dictionary (32 values) and every labelled series slot (128) full, as GET /perf/stats
// and GET /perf/metrics then answer their largest documents.
static IngestState& FullLabelsPipeline()
{
  static IngestState* pipeline = [] {
    Configuration configuration;  // defaults: 32 values per label, 128 series
    IngestState* p = new IngestState(configuration);
    uint64_t key = 1;
    for (int i = 0; i < 20000; i++)
    {
      // Uncorrelated values: every dictionary (32 values) and every series slot (128) fills up.
      const std::string aet = "AET" + std::to_string(i % 37);
      const std::string ip = "10.0.0." + std::to_string(i % 41);
      const std::string sop = "1.2.840.10008.5.1.4.1.1." + std::to_string(i % 43);
      RawLabels labels = TypicalLabels();
      labels.remoteAet = aet.c_str();
      labels.remoteIp = ip.c_str();
      labels.calledAet = "ORTHANC";
      labels.sopClass = sop.c_str();
      InstanceTimeline& timeline = p->timelines.ForCurrentThread();
      timeline.Received(MonotonicNowNs(), Transport::Dicom, 1000 + i, true, "1.2.840.10008.1.2.1", p->recorder);
      timeline.Filtered(MonotonicNowNs(), Transport::Dicom, p->recorder);
      StoredEvent event = Stored(Transport::Dicom, key++, labels);
      event.peerKey = 1 + i % 40;
      timeline.Stored(event, p->recorder);
    }
    return p;
  }();
  return *pipeline;
}


// GET /perf/stats with every label dictionary and every labelled series full: snapshot and the
// JSON text (what the REST route does, but the HTTP send). Second argument 1: one instance is
// recorded before each answer (Orthanc ingesting while read); the streams are read again for each
// answer either way (nothing is kept from one answer to the next since issue 35).
static void BM_StatsAnswer_FullLabels(benchmark::State& state)
{
  IngestState* pipeline = &FullLabelsPipeline();
  PluginStatus status;
  status.configuration = Configuration();
  const bool grouped = state.range(0) != 0;
  StatsQuery filter;
  if (grouped)
  {
    filter.hasGroupBy = true;
    filter.groupBy = LabelDimension::RemoteAet;
  }
  const StreamTable& table = pipeline->stats.Streams();
  state.counters["streams"] = static_cast<double>(table.Used());
  size_t bytes = 0;
  RawLabels labels = TypicalLabels();
  labels.remoteAet = "AET1";
  uint64_t key = 1u << 30;
  for (auto _ : state)
  {
    if (state.range(1))
    {
      InstanceTimeline& timeline = pipeline->timelines.ForCurrentThread();
      timeline.Received(MonotonicNowNs(), Transport::Dicom, 1000, true, "1.2.840.10008.1.2.1", pipeline->recorder);
      timeline.Filtered(MonotonicNowNs(), Transport::Dicom, pipeline->recorder);
      timeline.Stored(Stored(Transport::Dicom, key++, labels), pipeline->recorder);
    }
    MappedText text;  // as the route writes it
    JsonWriter writer(text);
    WriteStats(writer, pipeline->Collect(filter, status), filter);
    bytes = text.Size();
    benchmark::DoNotOptimize(text.Data());
  }
  state.counters["answerBytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_StatsAnswer_FullLabels)->Args({0, 0})->Args({0, 1})->Args({1, 0})->Unit(benchmark::kMillisecond);


// GET /perf/metrics with every label dictionary and every labelled series full: snapshot of each
// stream and the Prometheus text (what the REST route does, but the HTTP send).
static void BM_MetricsAnswer_FullLabels(benchmark::State& state)
{
  IngestState& pipeline = FullLabelsPipeline();
  PluginStatus status;
  status.configuration = Configuration();
  const StatsQuery query = MetricsQuery();  // as the route asks
  state.counters["streams"] = static_cast<double>(pipeline.stats.Streams().Used());
  size_t bytes = 0;
  for (auto _ : state)
  {
    MappedText text;
    ExportPrometheus(pipeline.Collect(query, status), text);
    bytes = text.Size();
    benchmark::DoNotOptimize(text.Data());
  }
  state.counters["answerBytes"] = static_cast<double>(bytes);
}
BENCHMARK(BM_MetricsAnswer_FullLabels)->Unit(benchmark::kMillisecond);


// The recorder's push of one instance's whole timeline into the recent ring (issue 12): one
// fetch_add, one compare-exchange, the record's words; what InstanceCompleted adds for
// /perf/slowest and /perf/trace. Two threads share the ring's counter.
static void BM_RecentPush(benchmark::State& state)
{
  static RecentInstances ring(4096);
  InstanceMeasurement measurement;
  for (size_t p = 0; p < kPhaseCount; p++)
  {
    measurement.Set(static_cast<Phase>(p), 1000, 2000);
  }
  const char* id = "1b9e7a3c-7d3c1d2a-0e5f6a7b-8c9d0e1f-2a3b4c5d";
  for (auto _ : state)
  {
    RecentInstance instance;
    FillRecentInstance(instance, measurement, 0, InstanceLabels(), Outcome::Stored, CurrentThreadNumber(), id);
    ring.Push(instance);
  }
  state.counters["recordBytes"] = static_cast<double>(RecentInstances::BytesPerRecord());
}
BENCHMARK(BM_RecentPush)->ThreadRange(1, 2);


// GET /perf/slowest (n=20) and GET /perf/trace (60 s) on a full ring of 4096 instances: copy,
// select, the answer's text (as the routes write it).
static void BM_RecentAnswers_FullRing(benchmark::State& state)
{
  static IngestState* pipeline = [] {
    IngestState* p = new IngestState(Configuration());
    const RawLabels labels = TypicalLabels();
    for (uint64_t key = 1; key <= 5000; key++)
    {
      InstanceTimeline& timeline = p->timelines.ForCurrentThread();
      timeline.Received(MonotonicNowNs(), Transport::Dicom, 1000, true, "1.2.840.10008.1.2.1", p->recorder);
      timeline.Filtered(MonotonicNowNs(), Transport::Dicom, p->recorder);
      StoredEvent event = Stored(Transport::Dicom, key, labels);
      event.peerKey = 1 + key % 4;
      event.instanceId = "1b9e7a3c-7d3c1d2a-0e5f6a7b-8c9d0e1f-2a3b4c5d";
      timeline.Stored(event, p->recorder);
    }
    return p;
  }();
  const bool trace = state.range(0) != 0;
  size_t bytes = 0;
  size_t instances = 0;
  for (auto _ : state)
  {
    MappedText text;
    JsonWriter writer(text);
    if (trace)
    {
      const RecentReport report = pipeline->CollectRecent(60);
      instances = report.ring.instances.size();
      WriteTrace(writer, report, 60, false);
    }
    else
    {
      RecentQuery query;
      const RecentReport report = pipeline->CollectSlowest(query);
      instances = report.matched;
      WriteSlowest(writer, report, query, false);
    }
    bytes = text.Size();
    benchmark::DoNotOptimize(text.Data());
  }
  state.counters["answerBytes"] = static_cast<double>(bytes);
  state.counters["instances"] = static_cast<double>(instances);
}
BENCHMARK(BM_RecentAnswers_FullRing)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);


// One reading of the watcher: the process's own sockets on two ports, from its descriptors (this
// benchmark's own few). Off the ingest path (its own thread), once a second while Orthanc ingests.
static void BM_ConnectionSample(benchmark::State& state)
{
  for (auto _ : state)
  {
    size_t count = 0;
    IngestPerf::ForEachProcessSocket(4242, 8042, [&count](const IngestPerf::SocketInfo&) { count++; });
    benchmark::DoNotOptimize(count);
  }
}
BENCHMARK(BM_ConnectionSample)->Unit(benchmark::kMicrosecond);


// One tick of the plugin's thread while Orthanc ingests, as Plugin.cpp wires it: the activity (the
// records opened by the threads holding a slot), the reading of the process's sockets (this
// benchmark's own few descriptors), the sample, and the pipeline's tick (the storage's free space,
// the records to classify and to conclude). 60 threads hold a slot of the default 512, as in an
// Orthanc with its 50 HTTP threads, its DICOM workers and its change thread. Warm here: the real
// tick, once a second, runs on cold caches (pluginCost's ingestWatcher figure).
static void BM_WatcherTick(benchmark::State& state)
{
  Configuration configuration;
  configuration.storageDirectory = "/tmp";
  IngestState pipeline(configuration);
  std::mutex mutex;
  std::condition_variable done;
  bool stop = false;
  size_t claimed = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 60; i++)
  {
    threads.emplace_back([&] {
      pipeline.timelines.ForCurrentThread();
      std::unique_lock<std::mutex> lock(mutex);
      claimed++;
      done.notify_all();
      done.wait(lock, [&] { return stop; });
    });
  }
  {
    std::unique_lock<std::mutex> lock(mutex);
    done.wait(lock, [&] { return claimed == threads.size(); });
  }
  IngestWatcher::Hooks hooks;
  uint64_t moved = 0;  // as if an instance had arrived since the last tick: every tick does its work
  hooks.activity = [&pipeline, &moved] { return pipeline.timelines.RecordsOpened() + ++moved; };
  hooks.socketsRead = [&pipeline](const std::vector<SocketInfo>& sockets, int64_t nowNs) {
    pipeline.SocketsRead(sockets, nowNs);
  };
  hooks.tick = [&pipeline](int64_t nowNs) { pipeline.Tick(nowNs); };
  IngestWatcher watcher(4242, 8042, std::move(hooks));
  for (auto _ : state)
  {
    benchmark::DoNotOptimize(watcher.Tick(MonotonicNowNs()));
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
  }
  done.notify_all();
  for (std::thread& thread : threads)
  {
    thread.join();
  }
}
BENCHMARK(BM_WatcherTick)->Unit(benchmark::kMicrosecond);


// The diagnosis of a report with every transport busy: the twelve rules and the JSON answer.
static void BM_Diagnose(benchmark::State& state)
{
  IngestPerf::DiagnosisInput input;
  input.window = "5m";
  input.activeSeconds = 300;
  for (auto& transport : input.transports)
  {
    transport.stored = 1000;
    for (auto& phase : transport.phases)
    {
      phase.count = 1000;
      phase.meanMs = phase.p50Ms = 3;
      phase.sumMs = 3000;
    }
  }
  input.all = input.transports[0];
  IngestPerf::PluginStatus status;
  for (auto _ : state)
  {
    const Json::Value answer = IngestPerf::ExportDiagnosis(IngestPerf::Diagnose(input), input, status);
    benchmark::DoNotOptimize(answer.size());
  }
}
BENCHMARK(BM_Diagnose)->Unit(benchmark::kMicrosecond);
