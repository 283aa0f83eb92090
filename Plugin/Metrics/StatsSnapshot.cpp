#include "Metrics/StatsSnapshot.h"

#include <algorithm>

namespace IngestPerf
{
  void TransportSnapshot::Merge(const TransportSnapshot& other)
  {
    for (size_t i = 0; i < kPhaseCount; i++)
    {
      phases[i].Merge(other.phases[i]);
    }
    for (size_t i = 0; i < other.parts.size(); i++)
    {
      PartsToFill(i).Merge(other.parts[i]);
    }
    receivedBytes.Merge(other.receivedBytes);
    storedBytes.Merge(other.storedBytes);
    for (size_t i = 0; i < kOutcomeCount; i++)
    {
      outcomes[i] += other.outcomes[i];
    }
    for (size_t i = 0; i < kCounterCount; i++)
    {
      counters[i] += other.counters[i];
    }
    if (other.firstStartNs != 0)
    {
      firstStartNs = (firstStartNs == 0) ? other.firstStartNs : std::min(firstStartNs, other.firstStartNs);
    }
    lastStoredNs = std::max(lastStoredNs, other.lastStoredNs);
    last10sInstances += other.last10sInstances;
    last10sBytes += other.last10sBytes;
    last60sInstances += other.last60sInstances;
    last60sBytes += other.last60sBytes;
  }


  const PhasePartsSnapshot& TransportSnapshot::PartsOf(Phase phase) const
  {
    static const PhasePartsSnapshot none;
    return parts.empty() ? none : parts[static_cast<size_t>(phase)];
  }


  PhasePartsSnapshot& TransportSnapshot::PartsToFill(size_t p)
  {
    if (parts.empty())
    {
      parts.resize(kPhaseCount);
    }
    return parts[p];
  }


  int64_t TransportSnapshot::ActiveSpanNs() const
  {
    if (firstStartNs == 0 || lastStoredNs < firstStartNs)
    {
      return 0;
    }
    return lastStoredNs - firstStartNs;
  }


  TransportSnapshot MergeTransports(const std::array<TransportSnapshot, kTransportCount>& transports)
  {
    TransportSnapshot all;
    for (const TransportSnapshot& transport : transports)
    {
      all.Merge(transport);
    }
    return all;
  }


  TransportSnapshot StatsSnapshot::AllTransports() const
  {
    return MergeTransports(transports);
  }


  SinceReset StatsSnapshot::History() const
  {
    SinceReset history;
    history.sinceWallNs = resetWallNs;
    history.nowWallNs = WallNs(takenNs);
    for (const TransportSnapshot& transport : transports)
    {
      history.stored += transport.outcomes[static_cast<size_t>(Outcome::Stored)];
    }
    history.firstStoredWallNs = firstStoredNs == 0 ? 0 : WallNs(firstStoredNs);
    history.lastStoredWallNs = lastStoredNs == 0 ? 0 : WallNs(lastStoredNs);
    return history;
  }
}
