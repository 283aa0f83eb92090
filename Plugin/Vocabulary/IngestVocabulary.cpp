#include "Vocabulary/IngestVocabulary.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    const NameDefinition kTransports[kTransportCount] = {
      {"rest", "HTTP POST /instances (and Orthanc peers, which use it)"},
      {"dicom", "DICOM C-STORE"},
      {"plugin", "stored by a plugin (DICOMweb STOW-RS and others), a Lua script, WebDAV, or of unknown origin"},
      {"job", "stored by an Orthanc job (modification, anonymization...): REST origin, but no HTTP request on the "
              "storing thread"},
    };

    constexpr Phase kNoParent = Phase::Count;

    const PhaseDefinition kPhases[kPhaseCount] = {
      {"receive",
       "HTTP request filter (before the body is read), or OnStored of the previous instance of the "
       "same request",
       "the instance's arrival: ReceivedInstanceCallback where this plugin holds it; else its "
       "IncomingDicomInstance filter, and then receive holds preStore's work too",
       PhasePlace::Inside, Phase::ServerTotal, PhaseNeed::Nothing},
      {"preStore", "ReceivedInstanceCallback", "this plugin's IncomingDicomInstance filter", PhasePlace::Inside,
       Phase::ServerTotal, PhaseNeed::ReceivedInstanceHook},
      {"transcode", "TranscoderCallback (Orthanc starts the ingest transcoding)",
       "TranscodeTiming FallThrough: this plugin's instance filter (the transcoding, then reading back and "
       "summarising the transcoded instance); Delegate: the end of the transcoding the plugin delegated",
       PhasePlace::Inside, Phase::PreStore, PhaseNeed::TranscoderHook},
      {"otherFilters", "this plugin's IncomingDicomInstance filter",
       "this plugin's second instance filter, the last of Orthanc's chain: the instance filters of the plugins "
       "loaded after this one (hooks.otherPlugins names them)",
       PhasePlace::Inside, Phase::ServerTotal, PhaseNeed::LaterPlugins},
      {"persist", "the last IncomingDicomInstance filter (this plugin's second one where it has one)",
       "this plugin's OnStoredInstanceCallback (the C-STORE filters, the storage write, the index transaction, "
       "the wait for Orthanc's OnStored lock and the OnStoredInstance callbacks of plugins loaded before this one)",
       PhasePlace::Inside, Phase::ServerTotal, PhaseNeed::Nothing},
      {"storagePrepare", "this plugin's IncomingDicomInstance filter",
       "first StorageArea create of the instance (MD5 and StorageCompression happen in between)", PhasePlace::Inside,
       Phase::Persist, PhaseNeed::TimedStorage},
      {"storageWrite", "start of each StorageArea create of the instance", "its end (summed over the instance's files)",
       PhasePlace::Inside, Phase::Persist, PhaseNeed::TimedStorage},
      {"indexUpdate", "end of the last StorageArea create of the instance",
       "this plugin's OnStoredInstanceCallback (the index transaction, then the wait for Orthanc's OnStored lock)",
       PhasePlace::Inside, Phase::Persist, PhaseNeed::TimedStorage},
      {"onStoredWait",
       "the instance's NewInstance change reaching OnChangeCallback (Orthanc queues it when the index transaction "
       "commits; measured for the instances whose change came before their OnStored, as it does when Orthanc's "
       "change thread is idle)",
       "this plugin's OnStoredInstanceCallback: the wait for Orthanc's OnStored lock (held while other instances' "
       "callbacks run) and the OnStoredInstance callbacks of the plugins loaded before this one",
       PhasePlace::Inside, Phase::Persist, PhaseNeed::Nothing},
      {"otherOnStored", "this plugin's OnStoredInstanceCallback",
       "this plugin's second OnStoredInstanceCallback, the last of Orthanc's chain: the OnStoredInstance callbacks "
       "of the plugins loaded after this one (hooks.otherPlugins names them), before Orthanc answers the sender",
       PhasePlace::Inside, Phase::ServerTotal, PhaseNeed::LaterPlugins},
      {"serverTotal", "first event of the instance seen by the plugin",
       "the end of Orthanc's OnStoredInstance callbacks (this plugin's last one)", PhasePlace::Instance, kNoParent,
       PhaseNeed::Nothing},
      {"changeDispatch", "OnStoredInstanceCallback", "OnChangeCallback(NewInstance)", PhasePlace::After, kNoParent,
       PhaseNeed::Nothing},
      {"associationGap",
       "OnStoredInstanceCallback of the previous instance from the same calling AET (the oldest one still "
       "waiting for a successor, within DicomScpTimeout)",
       "the instance's arrival: ReceivedInstanceCallback where this plugin holds it; else its "
       "IncomingDicomInstance filter, and then the gap holds Orthanc's parsing, ingest transcoding and "
       "summary of the instance, and the ReceivedInstanceCallback of the plugin that holds it",
       PhasePlace::Before, kNoParent, PhaseNeed::Nothing},
      {"requestGap",
       "OnStoredInstanceCallback of the last instance of the previous ingest request on the same HTTP "
       "keep-alive connection (Orthanc then builds, compresses and sends that request's answer, and the "
       "client sends the next request)",
       "HTTP request filter of this request (its headers read)", PhasePlace::Before, kNoParent,
       PhaseNeed::HttpConnection},
    };

    const char* const kNotAnAssociation = "only a C-STORE association carries a sequence of instances from one peer";
    const char* const kNotAnHttpConnection = "only an HTTP connection carries a sequence of requests";

    struct PhaseAbsence
    {
      Phase phase;
      Transport transport;
      const char* reason;
    };

    // The phases that cannot exist on a transport; every other pair can.
    const PhaseAbsence kAbsences[] = {
      {Phase::Receive, Transport::Job, "a job stores from a buffer it already holds: there is nothing to receive"},
      {Phase::Receive, Transport::Dicom,
       "DCMTK reads the whole C-STORE dataset before the first plugin hook fires; the network "
       "receive of a dataset is inside 'associationGap' (together with client idle time)"},
      {Phase::AssociationGap, Transport::Rest, kNotAnAssociation},
      {Phase::AssociationGap, Transport::Plugin, kNotAnAssociation},
      {Phase::AssociationGap, Transport::Job, kNotAnAssociation},
      {Phase::RequestGap, Transport::Dicom, "a C-STORE association's time between two instances is associationGap"},
      {Phase::RequestGap, Transport::Job, kNotAnHttpConnection},
    };

    const NameDefinition kPhaseParts[kPhasePartCount] = {
      {"onCpu", "the thread that ran the phase was on a CPU (its CPU time, user and kernel: parsing, hashing, "
                "compressing, transcoding, SQLite's own work, system calls)"},
      {"waitingForCpu", "the thread was ready to run and waited for a CPU (the scheduler's run delay: other "
                        "threads and processes on the same cores, a CPU quota)"},
      {"blocked", "the rest of the phase: the thread waited for something else (the disk, the network, a lock, "
                  "another thread, the database server, a client)"},
    };

    const OutcomeDefinition kOutcomes[kOutcomeCount] = {
      {"stored", "new instance written and indexed (OnStored, and not already stored)"},
      {"alreadyStored", "OnStored fired, but the index already held the instance: nothing new was written"},
      {"notDicom", "the body had no DICOM Part 10 header (no 'DICM' at offset 128) and was never stored"},
      {"rejected", "discarded by the instance filter of a plugin registered after this one: passed this plugin's "
                   "filter and was never written (told apart from a failed write with TimedStorage only)"},
      {"failed", "Orthanc refused the instance or could not store it (C-STORE status 0xA700/0xA900/0xC000, HTTP "
                 "error): it never reached OnStored, and its thread went on to other work; why, in failureReasons"},
      {"requestWithoutInstance",
       "an HTTP POST to an ingest route (/instances, DICOMweb /studies) that ended without any instance: "
       "an empty body, a ZIP without DICOM, an upload cut off or refused before Orthanc's store"},
    };

    const OutcomeDefinition kFailureReasons[kFailureReasonCount] = {
      {"beforeFilters",
       "ended before the instance filters: Orthanc could not read or identify the instance (a missing "
       "UID, a damaged file), its ingest transcoding failed, or a Lua script or the filter of a plugin "
       "registered before this one refused it"},
      {"afterFilters", "ended after the instance filters without being stored: the storage write or the index "
                       "transaction failed, or a C-STORE filter or the instance filter of a plugin registered after "
                       "this one discarded it (IngestPerf.TimedStorage tells these apart)"},
      {"diskFull", "ended after the instance filters while the storage's file system was full (less than 16 MiB free)"},
      {"quota", "ended after the instance filters with space left on the storage's file system while Orthanc has a "
                "MaximumStorageSize or MaximumPatientCount: its quota, or its index (not told apart: how full "
                "Orthanc's index is would take a call of Orthanc's REST API, which the plugin does not make)"},
      {"storageWrite", "the storage area refused to write the instance's file (seen by IngestPerf.TimedStorage)"},
      {"index", "the instance's files were written, then the index did not take it (seen by IngestPerf.TimedStorage): "
                "the database failed, or a limit of Orthanc's was reached"},
    };

    const NameDefinition kLabelDimensionDefinitions[kLabelDimensions] = {
      {"transport", "how the instance arrived (the transports above)"},
      {"remoteAet", "the calling AET of a C-STORE"},
      {"remoteIp", "the client's address (RemoteIP metadata)"},
      {"calledAet", "the AET the C-STORE called (CalledAET metadata)"},
      {"receivedSyntax", "the transfer syntax in the meta header of what arrived"},
      {"storedSyntax", "the transfer syntax stored (differs when ingest transcoding applies)"},
      {"sopClass", "the SOP Class UID"},
      {"sizeClass", "the size of the stored file, in classes"},
    };

    const char* const kSizeClassNames[kSizeClassCount] = {"<64KiB", "64KiB-1MiB", "1-16MiB", "16-256MiB", ">=256MiB"};

    template <typename Definition, size_t count>
    bool FindName(size_t& index, const Definition (&table)[count], const char* name)
    {
      for (size_t i = 0; i < count; i++)
      {
        if (strcmp(name, table[i].name) == 0)
        {
          index = i;
          return true;
        }
      }
      return false;
    }

    template <typename Enum, typename Definition, size_t count>
    bool ParseName(Enum& target, const Definition (&table)[count], const char* name)
    {
      size_t index = 0;
      if (name == nullptr || !FindName(index, table, name))
      {
        return false;
      }
      target = static_cast<Enum>(index);
      return true;
    }
  }


  const NameDefinition& DefinitionOf(Transport transport)
  {
    return kTransports[static_cast<size_t>(transport)];
  }


  const PhaseDefinition& DefinitionOf(Phase phase)
  {
    return kPhases[static_cast<size_t>(phase)];
  }


  const OutcomeDefinition& DefinitionOf(Outcome outcome)
  {
    return kOutcomes[static_cast<size_t>(outcome)];
  }


  const OutcomeDefinition& DefinitionOf(FailureReason reason)
  {
    return kFailureReasons[static_cast<size_t>(reason)];
  }


  const NameDefinition& DefinitionOf(LabelDimension dimension)
  {
    return kLabelDimensionDefinitions[static_cast<size_t>(dimension)];
  }


  const NameDefinition& DefinitionOf(PhasePart part)
  {
    return kPhaseParts[static_cast<size_t>(part)];
  }


  const char* PhasePartsAbsenceReason(Phase phase)
  {
    switch (phase)
    {
      case Phase::ChangeDispatch:
      case Phase::OnStoredWait:
        return "it spans two threads (the storing thread's OnStored, then Orthanc's change thread): no one "
               "thread's clocks bound it";
      default:
        return nullptr;
    }
  }


  const char* PhasePlaceName(PhasePlace place)
  {
    switch (place)
    {
      case PhasePlace::Before:
        return "before";
      case PhasePlace::Instance:
        return "instance";
      case PhasePlace::Inside:
        return "inside";
      default:
        return "after";
    }
  }


  const char* TransportName(Transport transport)
  {
    return kTransports[static_cast<size_t>(transport)].name;
  }


  const char* LabelDimensionName(LabelDimension dimension)
  {
    return kLabelDimensionDefinitions[static_cast<size_t>(dimension)].name;
  }


  const char* SizeClassName(SizeClass sizeClass)
  {
    return kSizeClassNames[static_cast<size_t>(sizeClass)];
  }


  SizeClass SizeClassOf(uint64_t bytes)
  {
    if (bytes < (uint64_t(64) << 10))
    {
      return SizeClass::Under64KiB;
    }
    if (bytes < (uint64_t(1) << 20))
    {
      return SizeClass::Under1MiB;
    }
    if (bytes < (uint64_t(16) << 20))
    {
      return SizeClass::Under16MiB;
    }
    if (bytes < (uint64_t(256) << 20))
    {
      return SizeClass::Under256MiB;
    }
    return SizeClass::Larger;
  }


  const char* PhaseAbsenceReason(Phase phase, Transport transport)
  {
    for (const PhaseAbsence& absence : kAbsences)
    {
      if (absence.phase == phase && absence.transport == transport)
      {
        return absence.reason;
      }
    }
    return nullptr;
  }


  bool ParseTransport(Transport& target, const char* name)
  {
    return ParseName(target, kTransports, name);
  }


  bool ParsePhase(Phase& target, const char* name)
  {
    return ParseName(target, kPhases, name);
  }


  bool ParseLabelDimension(LabelDimension& target, const char* name)
  {
    return ParseName(target, kLabelDimensionDefinitions, name);
  }
}
