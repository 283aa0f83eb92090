// A bounded set of label values (AETs, IP addresses, UIDs) for one label dimension: the first
// `capacity` distinct values seen get an id, later ones are "(other)" (until the values age out:
// Rotate keeps those used recently, at their ids). Interning is lock-free and
// allocation-free (fixed slots of 64 characters, enough for any DICOM UID), so it can run inside
// Orthanc's callbacks; readers turn ids back into names.
#pragma once

#include "Labels/InstanceLabels.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace IngestPerf
{
  // Decides whether a value not interned yet may be (LabelExposure); asked once per insertion
  // attempt, never for a value already interned.
  class LabelAdmission
  {
  public:
    virtual ~LabelAdmission() = default;
    // nullptr if `value` may be interned, else the name interned in its place.
    virtual const char* StandIn(const char* value, size_t length) const = 0;
  };

  class LabelDictionary
  {
  public:
    static constexpr size_t kMaxValueLength = 64;
    static constexpr size_t kMaxCapacity = 253;  // ids 2..254 fit in a LabelId
    static constexpr size_t kMaxProbe = 32;      // the longest lookup, whatever the fill

    // Without `admission`, every value is admitted. The admission outlives the dictionary.
    explicit LabelDictionary(size_t capacity, const LabelAdmission* admission = nullptr);
    ~LabelDictionary();

    // nullptr or "" -> (none); values are cut at kMaxValueLength (the admission sees them whole).
    LabelId Intern(const char* value);
    LabelId Intern(const char* value, size_t length);

    // `previous`: the name the id had before the last Rotate (or Clear), "(other)" if none.
    std::string Name(LabelId id, bool previous = false) const;
    // For REST filters: the id of a name ("(other)", "(none)" or a value), if known.
    bool Find(const std::string& name, LabelId& id) const;

    // POST /perf/reset: every value forgotten, the counters zeroed. The values go on in the other of
    // two tables of entries (emptied first), so a writer that is interning into the table of before
    // finishes there unharmed; only one stalled across two resets could meet its table being emptied.
    // Ids given before it name nothing, or another value, after it.
    void Clear();
    // The values age out (LabelCatalog::Rotate): as Clear, but the counters go on, the values used
    // since the second `keepUsedSince` (MarkUsed) stay, at their ids (Kept), and the values of before
    // stay nameable (Name with `previous`) until the next Rotate or Clear.
    void Rotate(uint32_t keepUsedSince = kKeepNone);
    static constexpr uint32_t kKeepNone = UINT32_MAX;
    // Whether the last Rotate kept the value of `id` (false after a Clear).
    bool Kept(LabelId id) const;
    // The value of `id` was used at `second` (its time, in whole seconds): the plugin's thread
    // recording an instance, or the thread counting a request that ended without one (two loads and
    // a relaxed store; a later second wins over an earlier one but for a race of the same second).
    void MarkUsed(LabelId id, uint32_t second);

    size_t Capacity() const { return capacity_; }
    size_t Size() const;
    // Values answered "(other)": no free slot near their hash, or a slot held by a preempted writer.
    uint64_t Overflowed() const { return overflowed_.load(std::memory_order_relaxed); }
    uint64_t Contended() const { return contended_.load(std::memory_order_relaxed); }
    // Values the admission refused, each time one was (they were counted under their stand-in).
    uint64_t Withheld() const { return withheld_.load(std::memory_order_relaxed); }

    // Test seam: holds a free slot as a writer preempted mid-write would, or releases it.
    void HoldSlotForTest(size_t index, bool held);

  private:
    struct Entry;

    LabelId InternCut(const char* value, size_t length, size_t wholeLength, bool admit);

    Entry* Current() const { return tables_[generation_.load(std::memory_order_acquire) & 1].get(); }
    const Entry* Previous() const { return tables_[(generation_.load(std::memory_order_acquire) + 1) & 1].get(); }

    size_t capacity_;
    const LabelAdmission* admission_;
    std::unique_ptr<Entry[]> tables_[2];
    std::atomic<unsigned> generation_;           // tables_[generation_ & 1] is in use
    std::unique_ptr<std::atomic<bool>[]> kept_;  // by id, at the last Rotate (the plugin's thread)
    std::atomic<uint64_t> overflowed_;
    std::atomic<uint64_t> contended_;
    std::atomic<uint64_t> withheld_;
  };
}
