#include "Metrics/StatsQuery.h"

#include "Labels/PeerPseudonym.h"

namespace IngestPerf
{
  namespace
  {
    // The value whose pseudonym is `name`: the exported peer labels are all a reader sees.
    bool FindByPseudonym(const LabelCatalog& catalog, LabelDimension dimension, const std::string& name, LabelId& id)
    {
      const LabelDictionary* dictionary = catalog.DictionaryOf(dimension);
      if (dictionary == nullptr || !IsPeerDimension(dimension))
      {
        return false;
      }
      for (size_t i = 0; i < dictionary->Capacity(); i++)
      {
        const LabelId candidate = static_cast<LabelId>(kFirstValueLabel + i);
        const std::string value = dictionary->Name(candidate);
        if (value != "(other)" && ExportedLabelValue(dimension, value, true) == name)
        {
          id = candidate;
          return true;
        }
      }
      return false;
    }
  }


  std::function<bool(const InstanceLabels&)> MakeStreamPredicate(const StatsQuery& filter, const LabelCatalog& catalog)
  {
    std::vector<std::pair<LabelDimension, LabelId>> wanted;
    bool impossible = false;
    if (filter.scope == StatsQuery::Scope::Single)
    {
      InstanceLabels transportOnly;
      transportOnly.SetTransport(filter.transport);
      wanted.emplace_back(LabelDimension::Transport, transportOnly.Get(LabelDimension::Transport));
    }
    for (const auto& label : filter.labels)
    {
      LabelId id;
      if (catalog.Find(label.first, label.second, id) ||
          (filter.hashedPeers && FindByPseudonym(catalog, label.first, label.second, id)))
      {
        wanted.emplace_back(label.first, id);
      }
      else
      {
        impossible = true;  // a value never seen: matches nothing (yet)
      }
    }
    return [wanted, impossible](const InstanceLabels& labels) {
      if (impossible)
      {
        return false;
      }
      for (const auto& condition : wanted)
      {
        if (labels.Get(condition.first) != condition.second)
        {
          return false;
        }
      }
      return true;
    };
  }
}
