// The opt-in timed storage area (IngestPerf.TimedStorage). Orthanc lets one plugin replace its
// storage, with no pass-through to the built-in one, so this stores the files itself with
// StorageFolder, in Orthanc's own folder and layout (the option can be
// switched on and off without moving a file), honouring SyncStorageArea and StoreDicom. It times
// every create, read and remove, and tells the storing thread's timeline when the instance's file
// was written, which splits persist into storagePrepare, storageWrite and indexUpdate.
#pragma once

#include "Platform/PluginStatus.h"

#include "Platform/Configuration.h"

#include <string>

namespace IngestPerf
{


  // Registers the storage area if the configuration asks for it and no other plugin holds or will
  // hold the storage. Never fails Orthanc's start-up: a refusal is reported in the state.
  StorageAreaState RegisterTimedStorageArea(const Configuration& configuration);
}
