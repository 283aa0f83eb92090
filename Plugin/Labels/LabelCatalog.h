// Turns the raw label values of an instance (strings Orthanc lends during a callback) into
// InstanceLabels, through one bounded LabelDictionary per open-ended dimension; transport and size
// class are fixed lists. Also names ids back for the exporters and resolves REST filters.
#pragma once

#include "Labels/InstanceLabels.h"
#include "Labels/LabelDictionary.h"
#include "Labels/RawLabels.h"

#include <array>
#include <memory>
#include <string>

namespace IngestPerf
{
  class LabelCatalog
  {
  public:
    explicit LabelCatalog(size_t maxValuesPerLabel);

    InstanceLabels Intern(Transport transport, const RawLabels& raw, uint64_t storedBytes);
    // Labels of a record that never reached OnStored: only what is known before the store.
    InstanceLabels InternAbandoned(Transport transport, const char* receivedSyntax);

    std::string Name(LabelDimension dimension, LabelId id) const;
    bool Find(LabelDimension dimension, const std::string& name, LabelId& id) const;

    // nullptr for the fixed dimensions (transport, sizeClass).
    const LabelDictionary* DictionaryOf(LabelDimension dimension) const;

  private:
    std::array<std::unique_ptr<LabelDictionary>, kLabelDimensions> dictionaries_;
  };
}
