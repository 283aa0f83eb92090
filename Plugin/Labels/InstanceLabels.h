// The labels of an ingested instance, each a small id into a bounded dictionary, packed into one
// 64-bit key so that a labelled stream is found with one hash and one compare. Id 0 is "(other)"
// (the dictionary was full), id 1 "(none)" (not applicable, e.g. a calling AET over HTTP).
#pragma once

#include "Vocabulary/IngestVocabulary.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  using LabelId = uint8_t;
  constexpr LabelId kOtherLabel = 0;
  constexpr LabelId kNoneLabel = 1;
  constexpr LabelId kFirstValueLabel = 2;
  // Not an id: a label the hooks before OnStored have not interned (yet), to be taken from strings.
  constexpr LabelId kUnidentified = 0xFF;

  // The key packs one id per dimension: a dimension more, or a wider id, must still fit in 64 bits
  // (a shift by 64 or more is undefined behaviour, not a wrap).
  constexpr size_t kLabelIdBits = 8 * sizeof(LabelId);
  static_assert(kLabelDimensions * kLabelIdBits <= 64, "the packed label key holds at most 64 bits");
  // The fixed lists are ids from kFirstValueLabel on, below kUnidentified.
  static_assert(kFirstValueLabel + kTransportCount < kUnidentified, "transports fit in a LabelId");
  static_assert(kFirstValueLabel + kSizeClassCount < kUnidentified, "size classes fit in a LabelId");

  // LabelCatalog::Generation() of ids interned while the tables were being rotated: named "(other)".
  constexpr uint32_t kAmbiguousGeneration = UINT32_MAX;

  struct InstanceLabels
  {
    std::array<LabelId, kLabelDimensions> ids{};
    // The catalog's generation the ids were interned in (LabelCatalog::Name): not in the key, whose
    // streams are all of the current one (StreamTable::FoldIntoOverflow).
    uint32_t generation = 0;

    InstanceLabels();  // every dimension "(none)", transport included

    void Set(LabelDimension dimension, LabelId id) { ids[static_cast<size_t>(dimension)] = id; }
    LabelId Get(LabelDimension dimension) const { return ids[static_cast<size_t>(dimension)]; }

    void SetTransport(Transport transport);
    void SetSizeClass(SizeClass sizeClass);
    // Only meaningful when the transport id was set from a Transport.
    Transport GetTransport() const;

    // Every label "(other)" but the transport: its transport's overflow stream (StreamTable), where
    // the labels beyond the tables, and those that aged out, are counted.
    static InstanceLabels Overflow(Transport transport);

    uint64_t Key() const;  // never 0
    static InstanceLabels FromKey(uint64_t key);
  };
}
