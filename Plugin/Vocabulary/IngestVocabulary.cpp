#include "Vocabulary/IngestVocabulary.h"

#include <cstring>

namespace IngestPerf
{
  namespace
  {
    const char* const kTransportNames[kTransportCount] = {"rest", "dicom", "plugin", "job"};

    const PhaseDefinition kPhases[kPhaseCount] = {
      {"receive",
       "HTTP request filter (before the body is read), or OnStored of the previous instance of the "
       "same request",
       "ReceivedInstanceCallback", true},
      {"preStore", "ReceivedInstanceCallback", "last IncomingDicomInstance/IncomingCStoreInstance filter", true},
      {"transcode", "TranscoderCallback (Orthanc starts the ingest transcoding)",
       "TranscodeTiming FallThrough: the last instance filter (the transcoding, then reading back and "
       "summarising the transcoded instance); Delegate: the end of the transcoding the plugin delegated",
       false},
      {"persist", "last IncomingDicomInstance/IncomingCStoreInstance filter", "OnStoredInstanceCallback", true},
      {"storagePrepare", "last IncomingDicomInstance/IncomingCStoreInstance filter",
       "first StorageArea create of the instance (MD5 and StorageCompression happen in between)", false},
      {"storageWrite", "start of each StorageArea create of the instance", "its end (summed over the instance's files)",
       false},
      {"indexUpdate", "end of the last StorageArea create of the instance",
       "OnStoredInstanceCallback (the index transaction, then the wait for Orthanc's OnStored lock)", false},
      {"serverTotal", "first event of the instance seen by the plugin", "OnStoredInstanceCallback", false},
      {"changeDispatch", "OnStoredInstanceCallback", "OnChangeCallback(NewInstance)", false},
      {"associationGap",
       "OnStoredInstanceCallback of the previous instance from the same calling AET (the oldest one still "
       "waiting for a successor, within DicomScpTimeout)",
       "ReceivedInstanceCallback", false},
      {"responseSend", "Orthanc starts compressing the ingest request's answer (no hook: never measured)",
       "Orthanc has written it to the socket", false},
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
                       "transaction failed, or the filter of a plugin registered after this one discarded it "
                       "(IngestPerf.TimedStorage tells these apart)"},
      {"diskFull", "ended after the instance filters while the storage's file system was full (less than 16 MiB free)"},
      {"quota", "ended after the instance filters while Orthanc's MaximumStorageSize or MaximumPatientCount was "
                "reached (and nothing could be recycled)"},
      {"storageWrite", "the storage area refused to write the instance's file (seen by IngestPerf.TimedStorage)"},
      {"index", "the instance's files were written, then the index did not take it (seen by IngestPerf.TimedStorage): "
                "the database failed, or a limit of Orthanc's was reached"},
    };
  }


  const char* TransportName(Transport transport)
  {
    return kTransportNames[static_cast<size_t>(transport)];
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


  bool ParseTransport(Transport& target, const char* name)
  {
    for (size_t i = 0; i < kTransportCount; i++)
    {
      if (strcmp(name, kTransportNames[i]) == 0)
      {
        target = static_cast<Transport>(i);
        return true;
      }
    }
    return false;
  }
}
