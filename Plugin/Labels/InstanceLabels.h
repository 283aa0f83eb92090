// The labels of an ingested instance, each a small id into a bounded dictionary, packed into one
// 64-bit key so that a labelled series is found with one hash and one compare. Id 0 is "(other)"
// (the dictionary was full), id 1 "(none)" (not applicable, e.g. a calling AET over HTTP).
#pragma once

#include "Vocabulary/IngestVocabulary.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  enum class LabelDimension
  {
    Transport,
    RemoteAet,
    RemoteIp,
    CalledAet,
    ReceivedSyntax,
    StoredSyntax,
    SopClass,
    SizeClass,
    Count
  };

  constexpr size_t kLabelDimensions = static_cast<size_t>(LabelDimension::Count);

  using LabelId = uint8_t;
  constexpr LabelId kOtherLabel = 0;
  constexpr LabelId kNoneLabel = 1;
  constexpr LabelId kFirstValueLabel = 2;
  // Not an id: a label the hooks before OnStored have not interned (yet), to be taken from strings.
  constexpr LabelId kUnidentified = 0xFF;

  enum class SizeClass
  {
    Under64KiB,
    Under1MiB,
    Under16MiB,
    Under256MiB,
    Larger,
    Count
  };

  const char* LabelDimensionName(LabelDimension dimension);
  bool ParseLabelDimension(LabelDimension& target, const char* name);
  const char* SizeClassName(SizeClass sizeClass);
  SizeClass SizeClassOf(uint64_t bytes);

  struct InstanceLabels
  {
    std::array<LabelId, kLabelDimensions> ids{};

    InstanceLabels();  // every dimension "(none)", transport included

    void Set(LabelDimension dimension, LabelId id) { ids[static_cast<size_t>(dimension)] = id; }
    LabelId Get(LabelDimension dimension) const { return ids[static_cast<size_t>(dimension)]; }

    void SetTransport(Transport transport);
    void SetSizeClass(SizeClass sizeClass);
    // Only meaningful when the transport id was set from a Transport.
    Transport GetTransport() const;

    uint64_t Key() const;  // never 0
    static InstanceLabels FromKey(uint64_t key);
  };
}
