#include "Metrics/RecentInstances.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace IngestPerf
{
  namespace
  {
    static_assert(std::is_trivially_copyable<RecentInstance>::value, "copied word by word");
    constexpr size_t kWords = (sizeof(RecentInstance) + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  }

  // state: 0 never written, 2t+1 being written by ticket t, 2t+2 published by ticket t. The payload
  // is atomic words (relaxed), so that a reader racing a writer reads a torn copy it then discards,
  // never undefined behaviour.
  struct RecentInstances::Slot
  {
    std::atomic<uint64_t> state{0};
    std::atomic<uint64_t> words[kWords];
  };


  void FillRecentInstance(RecentInstance& target, const InstanceMeasurement& measurement, int64_t startWallNs,
                          const InstanceLabels& labels, Outcome outcome, uint32_t thread, const char* instanceId)
  {
    target.measurement = measurement;
    target.startWallNs = startWallNs;
    target.labels = labels;
    target.outcome = outcome;
    target.thread = thread;
    size_t length = 0;
    if (instanceId != nullptr)
    {
      while (length < kMaxInstanceIdLength && instanceId[length] != '\0')
      {
        length++;
      }
      memcpy(target.instanceId, instanceId, length);
    }
    target.instanceId[length] = '\0';
    target.sequence = 0;
  }


  RecentInstances::RecentInstances(size_t capacity) :
    capacity_(std::min(std::max(capacity, kMinCapacity), kMaxCapacity)),
    slots_(new Slot[capacity_]),
    next_(0),
    resetAt_(0),
    skipped_(0)
  {
    for (size_t i = 0; i < capacity_; i++)
    {
      for (auto& word : slots_[i].words)
      {
        word.store(0, std::memory_order_relaxed);
      }
    }
  }


  RecentInstances::~RecentInstances() = default;


  size_t RecentInstances::BytesPerRecord()
  {
    return sizeof(Slot);
  }


  void RecentInstances::Push(const RecentInstance& instance)
  {
    const uint64_t ticket = next_.fetch_add(1, std::memory_order_relaxed);
    Slot& slot = slots_[ticket % capacity_];
    uint64_t seen = slot.state.load(std::memory_order_relaxed);
    // A writer still in this slot (preempted a whole lap), or a newer one already done: give up
    // rather than wait, this record is the one lost.
    if ((seen & 1) != 0 || seen >= 2 * ticket + 1 ||
        !slot.state.compare_exchange_strong(seen, 2 * ticket + 1, std::memory_order_relaxed))
    {
      skipped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::atomic_thread_fence(std::memory_order_release);  // the odd state before any word
    uint64_t words[kWords] = {};
    memcpy(words, &instance, sizeof(RecentInstance));
    for (size_t i = 0; i < kWords; i++)
    {
      slot.words[i].store(words[i], std::memory_order_relaxed);
    }
    slot.state.store(2 * ticket + 2, std::memory_order_release);
  }


  RecentSnapshot RecentInstances::Snapshot(int64_t sinceNs) const
  {
    RecentSnapshot snapshot;
    snapshot.capacity = capacity_;
    const uint64_t resetAt = resetAt_.load(std::memory_order_relaxed);
    snapshot.pushed = next_.load(std::memory_order_relaxed) - resetAt;
    snapshot.skipped = skipped_.load(std::memory_order_relaxed);
    uint64_t words[kWords];
    RecentInstance copy;
    for (size_t i = 0; i < capacity_; i++)
    {
      const Slot& slot = slots_[i];
      const uint64_t before = slot.state.load(std::memory_order_acquire);
      if (before == 0 || (before & 1) != 0 || before / 2 - 1 < resetAt)
      {
        continue;
      }
      for (size_t w = 0; w < kWords; w++)
      {
        words[w] = slot.words[w].load(std::memory_order_relaxed);
      }
      std::atomic_thread_fence(std::memory_order_acquire);  // the words before the second look
      if (slot.state.load(std::memory_order_relaxed) != before)
      {
        continue;  // rewritten during the copy: torn
      }
      memcpy(&copy, words, sizeof(RecentInstance));
      copy.sequence = before / 2 - 1 - resetAt;
      snapshot.held++;
      if (snapshot.oldestStoredNs == 0 || copy.measurement.storedNs < snapshot.oldestStoredNs)
      {
        snapshot.oldestStoredNs = copy.measurement.storedNs;
      }
      if (copy.measurement.storedNs >= sinceNs)
      {
        snapshot.instances.push_back(copy);
      }
    }
    std::sort(snapshot.instances.begin(), snapshot.instances.end(),
              [](const RecentInstance& a, const RecentInstance& b) { return a.sequence < b.sequence; });
    return snapshot;
  }


  void RecentInstances::Reset()
  {
    resetAt_.store(next_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }


  RecentInstanceList SelectSlowest(RecentInstanceList instances, Phase phase, size_t n)
  {
    instances.erase(std::remove_if(instances.begin(), instances.end(),
                                   [phase](const RecentInstance& instance) {
                                     return instance.measurement.Phase(phase) == InstanceMeasurement::kNotMeasured;
                                   }),
                    instances.end());
    const auto slower = [phase](const RecentInstance& a, const RecentInstance& b) {
      const int64_t da = a.measurement.Phase(phase);
      const int64_t db = b.measurement.Phase(phase);
      return da != db ? da > db : a.sequence > b.sequence;
    };
    const size_t kept = std::min(n, instances.size());
    std::partial_sort(instances.begin(), instances.begin() + static_cast<std::ptrdiff_t>(kept), instances.end(),
                      slower);
    instances.resize(kept);
    return instances;
  }
}
