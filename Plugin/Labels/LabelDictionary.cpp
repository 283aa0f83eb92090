#include "Labels/LabelDictionary.h"

#include "Platform/Hash.h"

#include <algorithm>
#include <cstring>

namespace IngestPerf
{
  namespace
  {
    constexpr uint32_t kEmpty = 0;
    constexpr uint32_t kWriting = 1;
    constexpr uint32_t kReady = 2;
    // A value aged out of a slot that a kept value's lookup may have to pass: free for a new value,
    // but a lookup goes on past it.
    constexpr uint32_t kRetired = 3;
    constexpr int kMaxClaims = 4;  // claims lost to other writers before "(other)" is answered
    constexpr int kMaxSpin = 256;  // about 0.1-0.3 us of loads
    constexpr char kOtherName[] = "(other)";
    constexpr char kNoneName[] = "(none)";
  }


  struct LabelDictionary::Entry
  {
    std::atomic<uint32_t> state{kEmpty};
    std::atomic<uint32_t> used{0};  // MarkUsed's latest second
    uint32_t length = 0;
    uint64_t hash = 0;
    char value[kMaxValueLength] = {};
  };


  LabelDictionary::LabelDictionary(size_t capacity, const LabelAdmission* admission) :
    capacity_(std::max<size_t>(1, std::min(capacity, kMaxCapacity))),
    admission_(admission),
    tables_{std::unique_ptr<Entry[]>(new Entry[capacity_]), std::unique_ptr<Entry[]>(new Entry[capacity_])},
    generation_(0),
    kept_(new std::atomic<bool>[capacity_]()),
    overflowed_(0),
    contended_(0),
    withheld_(0)
  {
  }


  LabelDictionary::~LabelDictionary() = default;


  LabelId LabelDictionary::Intern(const char* value)
  {
    return Intern(value, value == nullptr ? 0 : strlen(value));
  }


  LabelId LabelDictionary::Intern(const char* value, size_t length)
  {
    if (value == nullptr || length == 0)
    {
      return kNoneLabel;
    }
    return InternCut(value, std::min(length, kMaxValueLength), length, admission_ != nullptr);
  }


  LabelId LabelDictionary::InternCut(const char* value, size_t length, size_t wholeLength, bool admit)
  {
    // A value spelled like a reserved label is that label: it could be shown, and selected by a
    // REST filter, as nothing else.
    if (length == sizeof(kOtherName) - 1 && memcmp(value, kOtherName, length) == 0)
    {
      return kOtherLabel;
    }
    if (length == sizeof(kNoneName) - 1 && memcmp(value, kNoneName, length) == 0)
    {
      return kNoneLabel;
    }
    const uint64_t hash = Fnv1a(value, length);
    const size_t start = hash % capacity_;
    Entry* const entries = Current();
    // Insertion never goes further than kMaxProbe from a value's hash, so neither does a lookup:
    // a full dictionary answers an unknown value in at most kMaxProbe steps. A lookup stops at an
    // empty slot (the value would sit before it) and passes retired ones (a kept value may be after).
    const size_t probes = std::min(capacity_, kMaxProbe);
    for (int claim = 0; claim < kMaxClaims; claim++)
    {
      size_t free = capacity_;  // the first slot the value could take
      for (size_t probe = 0; probe < probes; probe++)
      {
        const size_t index = (start + probe) % capacity_;
        Entry& entry = entries[index];
        uint32_t state = entry.state.load(std::memory_order_acquire);
        // Another thread is writing this slot: it takes nanoseconds, wait for it (bounded).
        for (int spin = 0; state == kWriting && spin < kMaxSpin; spin++)
        {
          state = entry.state.load(std::memory_order_acquire);
        }
        if (state == kWriting)
        {
          // Its writer was preempted. The slot may be this very value: probing on could intern it a
          // second time, so give this instance "(other)" instead.
          contended_.fetch_add(1, std::memory_order_relaxed);
          return kOtherLabel;
        }
        if (state == kReady && entry.hash == hash && entry.length == length && memcmp(entry.value, value, length) == 0)
        {
          return static_cast<LabelId>(kFirstValueLabel + index);
        }
        if ((state == kEmpty || state == kRetired) && free == capacity_)
        {
          free = index;
        }
        if (state == kEmpty)
        {
          break;
        }
      }
      if (free == capacity_)
      {
        break;
      }
      if (admit)
      {
        // Not interned: admitted, or its stand-in is.
        if (const char* standIn = admission_->StandIn(value, wholeLength))
        {
          withheld_.fetch_add(1, std::memory_order_relaxed);
          return InternCut(standIn, std::min(strlen(standIn), kMaxValueLength), strlen(standIn), false);
        }
        admit = false;  // admitted: a slot taken meanwhile by another value does not change that
      }
      Entry& entry = entries[free];
      uint32_t state = entry.state.load(std::memory_order_acquire);
      if ((state == kEmpty || state == kRetired) &&
          entry.state.compare_exchange_strong(state, kWriting, std::memory_order_acquire))
      {
        memcpy(entry.value, value, length);
        entry.length = static_cast<uint32_t>(length);
        entry.hash = hash;
        entry.used.store(0, std::memory_order_relaxed);
        entry.state.store(kReady, std::memory_order_release);
        return static_cast<LabelId>(kFirstValueLabel + free);
      }
      // Taken meanwhile, maybe by this very value: looked up again.
    }
    overflowed_.fetch_add(1, std::memory_order_relaxed);
    return kOtherLabel;
  }


  std::string LabelDictionary::Name(LabelId id, bool previous) const
  {
    if (id == kOtherLabel)
    {
      return kOtherName;
    }
    if (id == kNoneLabel)
    {
      return kNoneName;
    }
    const size_t index = id - kFirstValueLabel;
    if (index >= capacity_)
    {
      return kOtherName;
    }
    const Entry& entry = (previous ? Previous() : Current())[index];
    if (entry.state.load(std::memory_order_acquire) != kReady)
    {
      return kOtherName;
    }
    return std::string(entry.value, entry.length);
  }


  bool LabelDictionary::Find(const std::string& name, LabelId& id) const
  {
    if (name == kOtherName)
    {
      id = kOtherLabel;
      return true;
    }
    if (name == kNoneName)
    {
      id = kNoneLabel;
      return true;
    }
    const Entry* const entries = Current();
    for (size_t index = 0; index < capacity_; index++)
    {
      const Entry& entry = entries[index];
      if (entry.state.load(std::memory_order_acquire) == kReady && entry.length == name.size() &&
          memcmp(entry.value, name.data(), name.size()) == 0)
      {
        id = static_cast<LabelId>(kFirstValueLabel + index);
        return true;
      }
    }
    return false;
  }


  size_t LabelDictionary::Size() const
  {
    size_t size = 0;
    const Entry* const entries = Current();
    for (size_t index = 0; index < capacity_; index++)
    {
      size += entries[index].state.load(std::memory_order_relaxed) == kReady ? 1 : 0;
    }
    return size;
  }


  void LabelDictionary::HoldSlotForTest(size_t index, bool held)
  {
    Current()[index % capacity_].state.store(held ? kWriting : kEmpty, std::memory_order_release);
  }


  void LabelDictionary::Rotate(uint32_t keepUsedSince)
  {
    // The other table, unused since the Rotate before the last (nothing interns into it), receives
    // the values kept, at their ids; the slots a kept value's lookup passes from its hash are
    // retired (free for a new value, passed by a lookup), the others emptied. Published by the
    // generation's store.
    const unsigned next = generation_.load(std::memory_order_relaxed) + 1;
    const Entry* const from = Current();
    Entry* const entries = tables_[next & 1].get();
    for (size_t index = 0; index < capacity_; index++)
    {
      entries[index].state.store(kEmpty, std::memory_order_relaxed);
    }
    for (size_t index = 0; index < capacity_; index++)
    {
      const Entry& old = from[index];
      const bool keep = old.state.load(std::memory_order_acquire) == kReady &&
                        old.used.load(std::memory_order_relaxed) >= keepUsedSince;
      kept_[index].store(keep, std::memory_order_relaxed);
      if (!keep)
      {
        continue;
      }
      Entry& entry = entries[index];
      memcpy(entry.value, old.value, old.length);
      entry.length = old.length;
      entry.hash = old.hash;
      entry.used.store(old.used.load(std::memory_order_relaxed), std::memory_order_relaxed);
      entry.state.store(kReady, std::memory_order_relaxed);
      for (size_t passed = old.hash % capacity_; passed != index; passed = (passed + 1) % capacity_)
      {
        if (entries[passed].state.load(std::memory_order_relaxed) == kEmpty)
        {
          entries[passed].state.store(kRetired, std::memory_order_relaxed);
        }
      }
    }
    generation_.store(next, std::memory_order_release);
  }


  void LabelDictionary::MarkUsed(LabelId id, uint32_t second)
  {
    const size_t index = id - kFirstValueLabel;
    if (id < kFirstValueLabel || index >= capacity_)
    {
      return;
    }
    Entry& entry = Current()[index];
    if (entry.state.load(std::memory_order_acquire) == kReady && entry.used.load(std::memory_order_relaxed) < second)
    {
      entry.used.store(second, std::memory_order_relaxed);
    }
  }


  bool LabelDictionary::Kept(LabelId id) const
  {
    const size_t index = id - kFirstValueLabel;
    return id >= kFirstValueLabel && index < capacity_ && kept_[index].load(std::memory_order_relaxed);
  }


  void LabelDictionary::Clear()
  {
    Rotate(kKeepNone);  // the table of before is not asked again (LabelCatalog: nothing was interned since)
    overflowed_.store(0, std::memory_order_relaxed);
    contended_.store(0, std::memory_order_relaxed);
    withheld_.store(0, std::memory_order_relaxed);
  }
}
