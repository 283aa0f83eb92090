// A bounded set of label values (AETs, IP addresses, UIDs) for one label dimension: the first
// `capacity` distinct values seen get an id, later ones are "(other)". Interning is lock-free and
// allocation-free (fixed slots of 64 characters, enough for any DICOM UID), so it can run inside
// Orthanc's callbacks; readers turn ids back into names.
#pragma once

#include "InstanceLabels.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace IngestPerf
{
  class LabelDictionary
  {
  public:
    static constexpr size_t kMaxValueLength = 64;
    static constexpr size_t kMaxCapacity = 253;  // ids 2..254 fit in a LabelId

    explicit LabelDictionary(size_t capacity);
    ~LabelDictionary();

    // nullptr or "" -> (none); values are cut at kMaxValueLength.
    LabelId Intern(const char* value);
    LabelId Intern(const char* value, size_t length);

    std::string Name(LabelId id) const;
    // For REST filters: the id of a name ("(other)", "(none)" or a value), if known.
    bool Find(const std::string& name, LabelId& id) const;

    size_t Capacity() const { return capacity_; }
    size_t Size() const;
    uint64_t Overflowed() const { return overflowed_.load(std::memory_order_relaxed); }

  private:
    struct Entry;

    size_t capacity_;
    std::unique_ptr<Entry[]> entries_;
    std::atomic<uint64_t> overflowed_;
  };
}
