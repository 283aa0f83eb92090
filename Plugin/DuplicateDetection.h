// Telling "stored" from "already stored" at OnStored. Orthanc 1.10.1 calls OnStored for both, and
// gives the plugin no status. Two facts decide it without any call back into Orthanc:
//  - for an already-stored instance, the "ReceptionDate" metadata is the one of the earlier store;
//    for a new one it is the commit time of this store, which is after this ingest started;
//  - a NewInstance change delivered before this ingest started belongs to an earlier store.
// ReceptionDate has one-second resolution, so within the second of the earlier store the change
// decides. Under "OverwriteInstances": true every store replaces the instance: never a duplicate.
#pragma once

#include <cstdint>

namespace IngestPerf
{
  // Parses Orthanc's "YYYYMMDDTHHMMSS" (UTC) into seconds since the Unix epoch.
  bool ParseReceptionDate(int64_t& epochSeconds, const char* value);

  class ChangeCorrelator;

  struct DuplicateEvidence
  {
    int64_t receptionSecond;   // -1 when the metadata is missing
    int64_t startWallSecond;   // when this ingest started
    bool changeSeenBeforeStart;
  };

  bool IsAlreadyStored(const DuplicateEvidence& evidence);
}
