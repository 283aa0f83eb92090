#include "Metrics/StatsQuery.h"

#include "Labels/PeerPseudonym.h"

#include <algorithm>

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


namespace IngestPerf
{
  namespace
  {
    // A recent instance's part of a transport's figures: its outcome, and, stored, its phases,
    // sizes and times (the parts of the phases are left to the figures since the reset).
    void AddRecentInstance(const RecentInstance& instance, TransportSnapshot& target)
    {
      target.outcomes[static_cast<size_t>(instance.outcome)]++;
      if (instance.outcome != Outcome::Stored)
      {
        return;
      }
      const InstanceMeasurement& measurement = instance.measurement;
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        if (measurement.phaseNs[p] != InstanceMeasurement::kNotMeasured)
        {
          target.phases[p].Add(measurement.phaseNs[p]);
        }
      }
      target.storedBytes.Add(static_cast<int64_t>(measurement.storedBytes));
      if (measurement.receivedBytes != InstanceMeasurement::kNotMeasured)
      {
        target.receivedBytes.Add(measurement.receivedBytes);
      }
      const int64_t startNs = measurement.hasTimeline ? measurement.startNs : measurement.storedNs;
      target.firstStartNs = target.firstStartNs == 0 ? startNs : std::min(target.firstStartNs, startNs);
      target.lastStoredNs = std::max(target.lastStoredNs, measurement.storedNs);
    }
  }


  GroupedSnapshot GroupRecentInstances(const RecentSnapshot& ring, const StatsQuery& query, const LabelCatalog& catalog,
                                       int64_t fromNs)
  {
    constexpr size_t kMaxGroups = 255;  // the group's id is a LabelId; the last one is "(other)"
    GroupedSnapshot result;
    result.fromRecent = true;
    result.recentCapacity = ring.capacity;
    result.recentSkipped = ring.skipped;
    // Every instance since the reset is in the ring while it has not wrapped; else those from its
    // oldest record on.
    result.recentComplete = ring.pushed <= ring.capacity || ring.oldestStoredNs <= fromNs;
    result.recentFromNs = result.recentComplete ? fromNs : ring.oldestStoredNs;
    // By name, as each instance was named when recorded: the ids of before an ageing name others now.
    const auto nameOf = [&catalog](const RecentInstance& instance, LabelDimension dimension) {
      return catalog.Name(dimension, instance.labels.Get(dimension), instance.labels.generation);
    };
    for (const RecentInstance& instance : ring.instances)
    {
      const Transport transport = instance.labels.GetTransport();
      if (!query.ListsTransport(transport) && query.scope != StatsQuery::Scope::MergedOnly)
      {
        continue;
      }
      bool matches = true;
      for (const auto& label : query.labels)
      {
        const std::string name = nameOf(instance, label.first);
        matches = matches && (name == label.second ||
                              (query.hashedPeers && ExportedLabelValue(label.first, name, true) == label.second));
      }
      if (!matches)
      {
        continue;
      }
      result.recentMatched++;
      AddRecentInstance(instance, result.transports[static_cast<size_t>(transport)]);
      if (!query.hasGroupBy)
      {
        continue;
      }
      std::string group = nameOf(instance, query.groupBy);
      if (result.groupNames.size() >= kMaxGroups &&
          std::find(result.groupNames.begin(), result.groupNames.end(), group) == result.groupNames.end())
      {
        group = "(other)";  // the names of two label generations fit; this guards the ids' range
      }
      const auto found = std::find(result.groupNames.begin(), result.groupNames.end(), group);
      const size_t index = static_cast<size_t>(found - result.groupNames.begin());
      if (found == result.groupNames.end())
      {
        result.groupNames.push_back(group);
        result.groups.emplace_back(static_cast<uint8_t>(index), TransportSnapshot());
      }
      AddRecentInstance(instance, result.groups[index].second);
    }
    return result;
  }
}
