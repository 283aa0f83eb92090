// Telling "stored" from "already stored" at OnStored. Orthanc 1.10.1 calls OnStored for both, and
// gives the plugin no status. Two facts decide it without any call back into Orthanc:
//  - for an already-stored instance, the "ReceptionDate" metadata (UTC, whole seconds) is the one
//    of the earlier store; for a new one it is the commit time of this store, after this ingest
//    started;
//  - the earlier store was followed by its NewInstance change, delivered before this ingest
//    started and not before the second of that ReceptionDate (and forgotten when a Deleted change
//    for the instance arrives, so that a re-send after DELETE is a new store).
// Orthanc reads ReceptionDate from time(), a coarse clock that lags the precise one by a few
// milliseconds, so every comparison keeps a margin. Only an ingest that starts within the second of
// the earlier store's commit, before that store's change is delivered, is taken for a new one.
// Under "OverwriteInstances": true every store replaces the instance: never a duplicate.
#pragma once

#include <cstdint>

namespace IngestPerf
{
  // Parses Orthanc's "YYYYMMDDTHHMMSS" (UTC) into seconds since the Unix epoch.
  bool ParseReceptionDate(int64_t& epochSeconds, const char* value);

  // Tolerance between Orthanc's coarse wall clock and ours.
  constexpr int64_t kWallClockMarginNs = 20000000;

  struct DuplicateEvidence
  {
    int64_t receptionSecond;  // -1 when the metadata is missing
    int64_t startWallNs;      // when this ingest started (wall clock)
    // An earlier store of this instance was seen before this ingest started: its NewInstance change,
    // or, when that change is not delivered yet (the change thread lags under load), its OnStored.
    bool hasEarlierStore;
    int64_t earlierStoreWallNs;
  };

  bool IsAlreadyStored(const DuplicateEvidence& evidence);
}
