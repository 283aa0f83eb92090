#include "Metrics/PluginCost.h"

namespace IngestPerf
{
  const char* CallbackName(Callback callback)
  {
    static const char* const kNames[kCallbackCount] = {
      "httpRequestFilter", "receivedInstance", "transcoder", "instanceFilter",
      "cstoreFilter",      "storedInstance",   "change"};
    return kNames[static_cast<size_t>(callback)];
  }


  PluginCost::PluginCost()
  {
    Reset();
  }


  void PluginCost::Reset()
  {
    for (Histogram& histogram : callbacks_)
    {
      histogram.Reset();
    }
  }


  std::array<HistogramSnapshot, kCallbackCount> PluginCost::Snapshot() const
  {
    std::array<HistogramSnapshot, kCallbackCount> result;
    for (size_t i = 0; i < kCallbackCount; i++)
    {
      result[i] = callbacks_[i].Snapshot();
    }
    return result;
  }
}
