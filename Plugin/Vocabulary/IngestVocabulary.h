// The vocabulary of the product: transports, phases and outcomes, with the names and definitions
// that /perf/stats and the README use. One table, so that code, JSON and docs cannot drift apart.
#pragma once

#include <cstddef>

namespace IngestPerf
{
  enum class Transport
  {
    Rest,    // HTTP POST /instances (and peers, which use it)
    Dicom,   // DICOM C-STORE
    Plugin,  // stored by a plugin (DICOMweb STOW-RS, ...), a Lua script, WebDAV or unknown origin
    Job,     // REST origin but no HTTP request on the thread: Orthanc's jobs (modification, ...)
    Count
  };

  enum class Phase
  {
    Receive,         // HTTP: request arrival (or previous instance of the request) -> ReceivedInstance
    PreStore,        // ReceivedInstance -> last instance filter: parse, transcode, hash, DICOM-as-JSON
    Transcode,       // transcoder callback -> last filter (FallThrough) or end of the delegated transcode
    Persist,         // last instance filter -> OnStored: storage write, index transaction, OnStored queue
    StoragePrepare,  // last filter -> first storage create (MD5, compression): timed storage only
    StorageWrite,    // storage create calls of the instance: timed storage only
    IndexUpdate,     // end of the last storage create -> OnStored: timed storage only
    ServerTotal,     // first visible event of the instance -> OnStored
    ChangeDispatch,  // OnStored -> NewInstance change delivered to OnChange
    AssociationGap,  // C-STORE: previous OnStored from the same calling AET -> next ReceivedInstance
    ResponseSend,    // HTTP: compressing and sending the answer of an ingest request (unobservable)
    Count
  };

  enum class Outcome
  {
    Stored,
    AlreadyStored,
    NotDicom,
    Rejected,  // discarded by a filter (known with TimedStorage only)
    Failed,    // Orthanc refused it or could not store it: see FailureReason
    RequestWithoutInstance,
    Count
  };

  // Why a store failed, as far as the plugin can tell (docs/outcomes.md).
  enum class FailureReason
  {
    BeforeFilters,  // before the instance filters: unreadable, no identifiers, transcoding, Lua, earlier filter
    AfterFilters,   // after them: the write, the index, or a later filter (not told apart without TimedStorage)
    DiskFull,       // after them, with the storage's file system (nearly) full
    Quota,          // after them, with Orthanc's MaximumStorageSize or MaximumPatientCount reached
    StorageWrite,   // TimedStorage saw the write fail
    Index,          // TimedStorage saw the files written and no OnStored: the index transaction failed
    Count
  };

  constexpr size_t kTransportCount = static_cast<size_t>(Transport::Count);
  constexpr size_t kPhaseCount = static_cast<size_t>(Phase::Count);
  constexpr size_t kOutcomeCount = static_cast<size_t>(Outcome::Count);
  constexpr size_t kFailureReasonCount = static_cast<size_t>(FailureReason::Count);

  struct PhaseDefinition
  {
    const char* name;
    const char* from;
    const char* to;
    bool partOfServerTotal;
  };

  struct OutcomeDefinition
  {
    const char* name;
    const char* meaning;
  };

  const char* TransportName(Transport transport);
  const PhaseDefinition& DefinitionOf(Phase phase);
  const OutcomeDefinition& DefinitionOf(Outcome outcome);
  // name: "beforeFilters", "afterFilters", "diskFull", "quota", "storageWrite", "index".
  const OutcomeDefinition& DefinitionOf(FailureReason reason);

  // Returns false for an unknown name.
  bool ParseTransport(Transport& target, const char* name);
}
