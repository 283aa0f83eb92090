#include "Correlation/ChangeCorrelator.h"

#include "Platform/BoundedSpinLock.h"

namespace IngestPerf
{
  struct ChangeCorrelator::Entry
  {
    std::atomic<bool> locked{false};
    bool paired = false;
    uint64_t labelsKey = 0;
    uint64_t key = 0;
    int64_t storedNs = 0;
    int64_t changeNs = 0;
  };


  ChangeCorrelator::ChangeCorrelator(size_t entries) :
    capacity_(entries == 0 ? 1 : entries),
    entries_(new Entry[capacity_]),
    skipped_(0),
    evicted_(0)
  {
  }


  ChangeCorrelator::~ChangeCorrelator() = default;


  ChangeCorrelator::Entry* ChangeCorrelator::Lock(uint64_t key)
  {
    Entry& entry = entries_[key % capacity_];
    if (!BoundedSpinLock(entry.locked))
    {
      skipped_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    return &entry;
  }


  void ChangeCorrelator::CountEviction(const Entry& entry, uint64_t key)
  {
    if (entry.key != 0 && entry.key != key && !entry.paired)
    {
      evicted_.fetch_add(1, std::memory_order_relaxed);
    }
  }


  void ChangeCorrelator::Unlock(Entry* entry)
  {
    entry->locked.store(false, std::memory_order_release);
  }


  ChangeCorrelator::Earlier ChangeCorrelator::EarlierStores(uint64_t key, int64_t startNs)
  {
    Earlier earlier;
    Entry* entry = Lock(key);
    if (entry == nullptr)
    {
      return earlier;
    }
    if (entry->key == key)
    {
      earlier.storedDuring = entry->storedNs != 0 && entry->storedNs >= startNs;
      earlier.changeBefore = entry->changeNs != 0 && entry->changeNs < startNs;
      earlier.changeNs = earlier.changeBefore ? entry->changeNs : 0;
      earlier.storedBefore = entry->storedNs != 0 && entry->storedNs < startNs;
      earlier.storedNs = earlier.storedBefore ? entry->storedNs : 0;
    }
    Unlock(entry);
    return earlier;
  }


  ChangeCorrelator::Pairing ChangeCorrelator::Stored(uint64_t key, int64_t storedNs, uint64_t labelsKey)
  {
    Pairing result{false, labelsKey, 0};
    Entry* entry = Lock(key);
    if (entry == nullptr)
    {
      return result;
    }
    if (entry->key == key && entry->changeNs != 0 && !entry->paired)
    {
      result.paired = true;
      result.lagNs = entry->changeNs - storedNs;
      entry->paired = true;
      entry->storedNs = storedNs;
    }
    else
    {
      CountEviction(*entry, key);
      entry->key = key;
      entry->paired = false;
      entry->labelsKey = labelsKey;
      entry->storedNs = storedNs;
      entry->changeNs = 0;
    }
    Unlock(entry);
    return result;
  }


  ChangeCorrelator::Pairing ChangeCorrelator::NewInstanceChange(uint64_t key, int64_t changeNs)
  {
    Pairing result{false, 0, 0};
    Entry* entry = Lock(key);
    if (entry == nullptr)
    {
      return result;
    }
    if (entry->key == key && entry->storedNs != 0 && !entry->paired)
    {
      result.paired = true;
      result.labelsKey = entry->labelsKey;
      result.lagNs = changeNs - entry->storedNs;
      entry->paired = true;
      entry->changeNs = changeNs;
    }
    else
    {
      CountEviction(*entry, key);
      entry->key = key;
      entry->paired = false;
      entry->storedNs = 0;
      entry->changeNs = changeNs;
    }
    Unlock(entry);
    return result;
  }


  void ChangeCorrelator::InstanceDeleted(uint64_t key)
  {
    Entry* entry = Lock(key);
    if (entry == nullptr)
    {
      return;
    }
    if (entry->key == key)
    {
      entry->key = 0;
      entry->paired = false;
      entry->storedNs = 0;
      entry->changeNs = 0;
    }
    Unlock(entry);
  }
}
