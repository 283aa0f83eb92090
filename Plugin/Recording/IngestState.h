// The plugin's whole ingest state, built together from the configuration: the per-thread timelines,
// the recorder with its correlation tables, and the aggregate; and the one place readers get plain
// copies of it from (Collect...). A container, not a step of the data flow: the steps are its
// members. One instance, found by every callback through ActiveIngestState(); the tests and the
// benchmarks build their own.
#pragma once

#include "Correlation/AssociationTracker.h"
#include "Correlation/ChangeCorrelator.h"
#include "Correlation/ChangeQueueStats.h"
#include "Correlation/DicomConnections.h"
#include "Correlation/StorageCondition.h"
#include "Labels/LabelCatalog.h"
#include "Metrics/IngestStats.h"
#include "Metrics/PluginCost.h"
#include "Metrics/RecentInstances.h"
#include "Metrics/StatsQuery.h"
#include "Metrics/StorageStats.h"
#include "Platform/Configuration.h"
#include "Platform/MonotonicClock.h"
#include "Recording/IngestRecorder.h"
#include "Recording/IngestReport.h"
#include "Recording/RecordConcluder.h"
#include "Timeline/ThreadTimelines.h"

namespace IngestPerf
{
  struct IngestState;

  // The one ingest state every Orthanc callback reaches. Set by the entry point before it registers
  // anything and never changed afterwards (Orthanc may run a callback until the library is
  // unloaded); null while the plugin is disabled.
  IngestState* ActiveIngestState();
  void SetActiveIngestState(IngestState* state);

  struct IngestState
  {
    explicit IngestState(const Configuration& configuration);

    // Everything a reader may show, for this query, as plain copies. Each Collect first records the
    // stored instances still queued for the plugin's thread (IngestRecorder::Drain): a reader sees
    // every instance stored before it asked; nothing a reader sees is changed otherwise.
    IngestReport Collect(const StatsQuery& query, const PluginStatus& status);
    // GET /perf/slowest: the slowest recent instances that match the query.
    RecentReport CollectSlowest(const RecentQuery& query);
    // GET /perf/trace: every recent instance stored in the last `seconds`, oldest first.
    RecentReport CollectRecent(int64_t seconds);
    // GET /perf/slots: the slots of one time window, each on its own.
    SlotsReport CollectSlots(Window window);
    // A reader's drain (each Collect, the reset): every instance stored before it asked, those held
    // for their connections' check included (IngestRecorder::Drain), named as the table is after
    // kReaderWaitNs (the plugin's thread checks at once: microseconds, milliseconds under load).
    void DrainForReader();
    static constexpr int64_t kReaderWaitNs = 200 * int64_t(1000000);
    // POST /perf/reset: every figure from then on counts only what started after it; the state that
    // follows what is in progress (open records, association chains, pending changes) goes on.
    void Reset();

    // The plugin's thread, once a second while Orthanc ingests: assesses the storage's free space,
    // concludes the records whose store has ended.
    void Tick(int64_t nowNs);
    // The plugin's thread: Orthanc's connections just read (the DICOM and HTTP ports').
    void SocketsRead(const std::vector<SocketInfo>& sockets, int64_t nowNs);
    // The plugin's thread, between readings: whether a known DICOM connection closed.
    bool CheckConnections(int64_t nowNs);
    // The ingest path (OnStored of a C-STORE instance): the one connection the plugin's thread last
    // saw open from `peer`, 0 when not known (several, or none yet: then a new reading is asked for).
    // A read of the plugin's own table: no system call.
    uint64_t ConnectionOf(LabelId peer, LabelId remoteAet, int64_t atNs, int64_t checkSinceNs, bool& later);

    ThreadTimelines timelines;
    LabelCatalog labels;
    DicomConnections connections;
    StorageCondition storageCondition;
    StorageLimits storageLimits;
    // Tells the plugin's thread that a C-STORE instance's connection was not known: a reading of
    // Orthanc's connections soon. Set by the entry point.
    std::function<void(int64_t nowNs)> readingWanted;
    // Whether the plugin's thread has checked the DICOM connections since `ns` (a check that started
    // after it). Set by the entry point; unset, always.
    std::function<bool(int64_t ns)> checkedSince;
    ChangeCorrelator correlator;
    AssociationTracker associations;
    IngestStats stats;
    StorageStats storage;
    ChangeQueueStats changes;
    PluginCost cost;
    RecentInstances recent;
    IngestRecorder recorder;
    RecordConcluder concluder;

  private:
    static constexpr double kAgeAtFill = 0.75;
    static constexpr int64_t kMinLabelAgeNs = 60 * int64_t(1000000000);
    void AgeLabelsIfFull(int64_t nowNs);
    const int64_t startNs_ = MonotonicNowNs();
    uint16_t dicomPort_;
    // The plugin's thread's own, kept between readings: no allocation once grown.
    std::vector<DicomConnections::Reading> dicomReadings_;
    std::vector<SocketInfo> httpSockets_;  // the HTTP port's connections at the last reading
  };
}
