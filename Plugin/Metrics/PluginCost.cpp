#include "Metrics/PluginCost.h"

#include <algorithm>

namespace IngestPerf
{
  const char* CallbackName(Callback callback)
  {
    static const char* const kNames[kCallbackCount] = {"httpRequestFilter", "receivedInstance", "transcoder",
                                                       "instanceFilter",    "storedInstance",   "change"};
    return kNames[static_cast<size_t>(callback)];
  }


  uint64_t PluginCostSnapshot::CallbacksNs() const
  {
    uint64_t ns = 0;
    for (const HistogramSnapshot& callback : callbacks)
    {
      ns += callback.Sum();
    }
    return ns * PluginCost::kSamplingPeriod;
  }


  uint64_t PluginCostSnapshot::IngestNs() const
  {
    return CallbacksNs() + static_cast<uint64_t>(std::max<int64_t>(0, watcher.activeCpuNs));
  }


  PluginCost::PluginCost()
  {
    Reset();
  }


  void PluginCost::Record(Callback callback, int64_t cpuNs)
  {
    callbacks_[static_cast<size_t>(callback)].Record(std::max<int64_t>(0, cpuNs));
  }


  void PluginCost::Reset()
  {
    for (Histogram& histogram : callbacks_)
    {
      histogram.Reset();
    }
    insidePerInstance_.Reset();
  }


  PluginCostSnapshot PluginCost::Snapshot() const
  {
    PluginCostSnapshot result;
    for (size_t i = 0; i < kCallbackCount; i++)
    {
      result.callbacks[i] = callbacks_[i].Snapshot();
    }
    result.insidePerInstance = insidePerInstance_.Snapshot();
    return result;
  }
}
