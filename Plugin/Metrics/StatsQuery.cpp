#include "Metrics/StatsQuery.h"

namespace IngestPerf
{
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
      if (catalog.Find(label.first, label.second, id))
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
