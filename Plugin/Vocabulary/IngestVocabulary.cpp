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
      {"discardedBeforeFilter",
       "received but never reached the instance filters: unreadable DICOM, failed transcoding, or "
       "discarded by a Lua script or a filter of a plugin registered before this one"},
      {"discardedAfterFilter",
       "passed the instance filters but never reached OnStored: discarded by a later filter, or failed "
       "to write to storage or to the index"},
      {"requestWithoutInstance",
       "an HTTP POST to an ingest route (/instances, DICOMweb /studies) that stored no instance at all "
       "(empty body, ZIP without DICOM, refused before Orthanc's store)"},
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
