// Turns the raw label values of an instance (strings Orthanc lends during a callback) into
// InstanceLabels, through one bounded LabelDictionary per open-ended dimension; transport and size
// class are fixed lists. Also names ids back for the exporters and resolves REST filters.
#pragma once

#include "Labels/InstanceLabels.h"
#include "Labels/LabelDictionary.h"
#include "Labels/RawLabels.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace IngestPerf
{
  // Who sent an instance, as the hooks before OnStored interned it (kUnidentified where they did not).
  struct IdentifiedLabels
  {
    LabelId remoteAet = kUnidentified;
    LabelId remoteIp = kUnidentified;
    LabelId calledAet = kUnidentified;
    // Whether they were interned in the tables in use (IsCurrent of a time read before): if not,
    // they are taken as "(other)" (or, at OnStored, from its strings).
    bool current = true;
  };

  class LabelCatalog
  {
  public:
    explicit LabelCatalog(size_t maxValuesPerLabel);

    // Ids already interned by a hook (kUnidentified where not) take the place of raw's strings.
    InstanceLabels Intern(Transport transport, const RawLabels& raw, uint64_t storedBytes,
                          const IdentifiedLabels& identified = IdentifiedLabels());
    // One value of an open-ended dimension, for a hook that identifies the instance early. Every
    // value from outside enters the plugin here: what may leave it is decided here (LabelExposure).
    LabelId InternValue(LabelDimension dimension, const char* value);
    // The labels of a record that ended without OnStored: its transport and who sent it, as far as
    // it was identified (an unidentified calling AET of a C-STORE is "(unknown)").
    InstanceLabels InternEnded(Transport transport, const IdentifiedLabels& identified);

    std::string Name(LabelDimension dimension, LabelId id) const;
    // The name of an id of labels interned in `generation` (InstanceLabels::generation): from the
    // values of before the last Rotate if it was then, "(other)" if earlier.
    std::string Name(LabelDimension dimension, LabelId id, uint32_t generation) const;
    // Whether an id interned at `internedNs` (monotonic; a time read before interning it) names a
    // value in use: no Rotate or Clear began since. Never true of an id of the tables of before.
    bool IsCurrent(int64_t internedNs) const { return internedNs >= currentSinceNs_.load(std::memory_order_acquire); }
    // Odd while the tables are rotated; every Rotate or Clear adds 2.
    uint32_t Generation() const { return generation_.load(std::memory_order_acquire); }
    bool Find(LabelDimension dimension, const std::string& name, LabelId& id) const;

    // nullptr for the fixed dimensions (transport, sizeClass).
    const LabelDictionary* DictionaryOf(LabelDimension dimension) const;

    // POST /perf/reset: every value forgotten (LabelDictionary::Clear), learned again as they come.
    void Clear();
    // The values age out (the plugin's thread, when a table fills), except those used since
    // `keepUsedSinceNs` (MarkUsed), which keep their ids (Kept): the others are learned again
    // as they come, those of before still named for what holds their ids until the next Rotate.
    void Rotate(int64_t keepUsedSinceNs = INT64_MAX);
    // Whether every value of `labels` was kept by the last Rotate (or is no value: "(other)",
    // "(none)", a fixed dimension): what counts under them goes on under the same names.
    bool Kept(const InstanceLabels& labels) const;
    // The values of `labels` (of the current generation) were used at `atNs` (monotonic): the
    // plugin's thread recording an instance, or the thread that counts a request that ended without
    // one (two loads and a store per value, in the plugin's own memory).
    void MarkUsed(const InstanceLabels& labels, int64_t atNs);
    uint64_t Rotations() const { return rotations_.load(std::memory_order_relaxed); }  // since the reset
    int64_t LastRotationNs() const { return currentSinceNs_.load(std::memory_order_relaxed); }
    // The fullest dictionary's share of its capacity, 0 to 1.
    double MostFilled() const;

  private:
    // Declared first: the dictionaries use them until they are destroyed.
    std::array<std::unique_ptr<LabelAdmission>, kLabelDimensions> admissions_;
    std::array<std::unique_ptr<LabelDictionary>, kLabelDimensions> dictionaries_;
    // The generation of ids interned since Generation() was `before`.
    uint32_t Stamp(uint32_t before) const;
    // Turns the tables (Rotate, or Clear with `clear`).
    void Turn(bool clear, int64_t keepUsedSinceNs = INT64_MAX);
    // Since when the values in use were interned (after the last Rotate or Clear ended).
    std::atomic<int64_t> currentSinceNs_{INT64_MIN};  // INT64_MIN: every id is (never turned)
    std::atomic<uint32_t> generation_{0};
    std::atomic<uint64_t> rotations_{0};
  };
}
