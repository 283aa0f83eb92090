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
  // Who sent an instance, as the hooks before OnStored interned it (kUnidentified where they did not).
  struct IdentifiedLabels
  {
    LabelId remoteAet = kUnidentified;
    LabelId remoteIp = kUnidentified;
    LabelId calledAet = kUnidentified;
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
    bool Find(LabelDimension dimension, const std::string& name, LabelId& id) const;

    // nullptr for the fixed dimensions (transport, sizeClass).
    const LabelDictionary* DictionaryOf(LabelDimension dimension) const;

    // POST /perf/reset: every value forgotten (LabelDictionary::Clear), learned again as they come.
    void Clear();

  private:
    // Declared first: the dictionaries use them until they are destroyed.
    std::array<std::unique_ptr<LabelAdmission>, kLabelDimensions> admissions_;
    std::array<std::unique_ptr<LabelDictionary>, kLabelDimensions> dictionaries_;
  };
}
