// Turns closed timelines into statistics: decides stored vs already stored, pairs the instance
// with its NewInstance change and (C-STORE) with the previous instance of its peer, and records into IngestStats.
// Called on the ingesting thread (InstanceCompleted, InstanceAbandoned) and on Orthanc's change thread
// (NewInstanceChange).
#pragma once

#include "Correlation/AssociationTracker.h"
#include "Correlation/ChangeCorrelator.h"
#include "Correlation/ChangeQueueStats.h"
#include "Metrics/IngestStats.h"
#include "Metrics/InstanceRecord.h"
#include "Metrics/RecentInstances.h"
#include "Labels/LabelCatalog.h"
#include "Timeline/InstanceTimeline.h"

namespace IngestPerf
{
  // The one place where a closed timeline becomes durations: every phase observed for this
  // instance, kNotMeasured for the others. associationGapNs: -1 when not measured.
  InstanceRecord ToRecord(const CompletedInstance& instance, int64_t associationGapNs);

  class IngestRecorder : public TimelineSink
  {
  public:
    IngestRecorder(IngestStats& stats, LabelCatalog& labels, ChangeCorrelator& correlator,
                   AssociationTracker& associations, ChangeQueueStats& changes, RecentInstances& recent,
                   bool overwriteInstances);

    void InstanceCompleted(const CompletedInstance& instance) override;
    void InstanceAbandoned(Transport transport, Outcome outcome, const char* receivedSyntax) override;

    // Returns the OnStored time of the instance if it was already stored, 0 otherwise.
    int64_t NewInstanceChange(uint64_t instanceKey, int64_t nowNs);
    void InstanceDeleted(uint64_t instanceKey);

  private:
    // nowNs: when the pairing was made (OnStored or the change), for the time windows.
    void RecordPairing(const ChangeCorrelator::Pairing& pairing, int64_t nowNs);
    void Remember(const CompletedInstance& instance, const InstanceRecord& record, const InstanceLabels& labels,
                  Outcome outcome);

    IngestStats& stats_;
    LabelCatalog& labels_;
    ChangeCorrelator& correlator_;
    AssociationTracker& associations_;
    ChangeQueueStats& changes_;
    RecentInstances& recent_;
    bool overwriteInstances_;
  };
}
