// The vocabulary of the product: transports, phases (where each lies in an instance's timeline, and
// on which transports it exists), outcomes, failure reasons and label dimensions, with the names and
// definitions that every answer uses. One table each, so that code, JSON, the page, the report and
// the tests (which read them from GET /perf/vocabulary) cannot drift apart.
#pragma once

#include <cstddef>
#include <cstdint>

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
    OtherFilters,    // this plugin's instance filter -> its second one, last in Orthanc's chain: later plugins'
    Persist,         // last instance filter -> OnStored: storage write, index transaction, OnStored queue
    StoragePrepare,  // last filter -> first storage create (MD5, compression): timed storage only
    StorageWrite,    // storage create calls of the instance: timed storage only
    IndexUpdate,     // end of the last storage create -> OnStored: timed storage only
    OnStoredWait,    // the NewInstance change (index committed) -> this plugin's OnStored, when it came first
    OtherOnStored,   // this plugin's OnStored -> its second one, last in Orthanc's chain: later plugins'
    ServerTotal,     // first visible event of the instance -> OnStored
    ChangeDispatch,  // OnStored -> NewInstance change delivered to OnChange
    AssociationGap,  // C-STORE: previous OnStored from the same calling AET -> next ReceivedInstance
    RequestGap,      // HTTP: OnStored of a request -> the next request's filter on the same keep-alive connection
    Count
  };

  // Where a phase's time went, on the thread that ran it: the three parts add up to its duration.
  enum class PhasePart
  {
    OnCpu,          // the thread's CPU time, user and kernel
    WaitingForCpu,  // ready to run, waiting for a CPU (the scheduler's run delay)
    Blocked,        // the rest: waiting for the disk, the network, a lock, another thread
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

  // What an instance is labelled with (docs/labels.md); Labels/InstanceLabels packs one id of each.
  enum class LabelDimension
  {
    Transport,
    RemoteAet,
    RemoteIp,
    CalledAet,
    ReceivedSyntax,
    StoredSyntax,
    SopClass,
    SizeClass,
    Count
  };

  enum class SizeClass
  {
    Under64KiB,
    Under1MiB,
    Under16MiB,
    Under256MiB,
    Larger,
    Count
  };

  constexpr size_t kTransportCount = static_cast<size_t>(Transport::Count);
  constexpr size_t kPhaseCount = static_cast<size_t>(Phase::Count);
  constexpr size_t kPhasePartCount = static_cast<size_t>(PhasePart::Count);
  constexpr size_t kOutcomeCount = static_cast<size_t>(Outcome::Count);
  constexpr size_t kFailureReasonCount = static_cast<size_t>(FailureReason::Count);
  constexpr size_t kLabelDimensions = static_cast<size_t>(LabelDimension::Count);
  constexpr size_t kSizeClassCount = static_cast<size_t>(SizeClass::Count);

  // Where a phase lies in the timeline of one instance, whose span is serverTotal.
  enum class PhasePlace
  {
    Before,    // ends where the instance's first event is (associationGap: the sender's side of the cycle)
    Instance,  // the instance's whole span (serverTotal)
    Inside,    // within `parent`, which is the instance or a phase inside it
    After      // after OnStored, when the instance's record is already written (not in /perf/slowest)
  };

  // What a phase needs besides the hooks every run has; without it, the phase is reported unobservable
  // with the reason (Recording/Unobservable).
  enum class PhaseNeed
  {
    Nothing,
    ReceivedInstanceHook,  // the ReceivedInstanceCallback, which only one plugin may hold
    TranscoderHook,        // the transcoder callback (IngestTranscoding and IngestPerf.TranscodeTiming)
    TimedStorage,          // the timed storage area (IngestPerf.TimedStorage)
    HttpConnection,        // the HTTP connection a request came on (Platform/HttpConnectionIdentity)
    LaterPlugins           // plugins loaded after this one, and this plugin's second callback after theirs
  };

  struct PhaseDefinition
  {
    const char* name;
    const char* from;
    const char* to;
    PhasePlace place;
    Phase parent;  // the phase whose span encloses it (drawn inside it in /perf/trace); Phase::Count: none
    PhaseNeed need;
  };

  struct NameDefinition
  {
    const char* name;
    const char* meaning;
  };
  using OutcomeDefinition = NameDefinition;

  const NameDefinition& DefinitionOf(Transport transport);
  const PhaseDefinition& DefinitionOf(Phase phase);
  const OutcomeDefinition& DefinitionOf(Outcome outcome);
  // name: "beforeFilters", "afterFilters", "diskFull", "quota", "storageWrite", "index".
  const OutcomeDefinition& DefinitionOf(FailureReason reason);
  const NameDefinition& DefinitionOf(LabelDimension dimension);
  const NameDefinition& DefinitionOf(PhasePart part);

  // Why `phase` cannot be split into its parts, whatever the configuration (it does not run on one
  // thread); nullptr when it can be.
  const char* PhasePartsAbsenceReason(Phase phase);

  // "before", "instance", "inside", "after".
  const char* PhasePlaceName(PhasePlace place);

  // The phases right inside the instance follow one another: serverTotal is their sum, exactly.
  inline bool PhasePartOfServerTotal(Phase phase)
  {
    return DefinitionOf(phase).parent == Phase::ServerTotal;
  }

  const char* TransportName(Transport transport);
  const char* LabelDimensionName(LabelDimension dimension);
  const char* SizeClassName(SizeClass sizeClass);
  SizeClass SizeClassOf(uint64_t bytes);

  // Why `phase` cannot exist on `transport`, whatever the configuration; nullptr when it can.
  const char* PhaseAbsenceReason(Phase phase, Transport transport);
  inline bool PhaseExistsOn(Phase phase, Transport transport)
  {
    return PhaseAbsenceReason(phase, transport) == nullptr;
  }

  // Known when the instance's record is written at OnStored, so kept with each recent instance
  // (/perf/slowest ranks by it, /perf/trace draws it): every phase but those after OnStored.
  inline bool PhaseInRecentInstances(Phase phase)
  {
    return phase != Phase::Count && DefinitionOf(phase).place != PhasePlace::After;
  }

  // Returns false for an unknown name.
  bool ParseTransport(Transport& target, const char* name);
  bool ParsePhase(Phase& target, const char* name);
  bool ParseLabelDimension(LabelDimension& target, const char* name);
}
