// The figures of the JSON answers, written the same way in each: durations in milliseconds with 0.1
// microsecond resolution, seconds and rates to 0.001, a histogram as count, sum, mean, min, its
// quantiles and max, and a phase no plugin can measure as an object with its reason.
#pragma once

#include "Metrics/Histogram.h"
#include "Platform/JsonText.h"

#include <cstddef>
#include <cstdint>

namespace IngestPerf
{
  struct Quantile
  {
    const char* name;
    double q;
  };

  constexpr size_t kQuantileCount = 4;
  extern const Quantile kQuantiles[kQuantileCount];  // p50, p90, p99, p99.9

  // Milliseconds with 0.1 microsecond resolution.
  double NanosecondsToMilliseconds(int64_t ns);
  double RoundTo(double value, double resolution);
  double MeanMs(uint64_t sumNs, uint64_t count);
  double Seconds(int64_t ns);

  void WriteUnobservable(JsonWriter& out, const char* reason);
  // count, sum, mean, min, the quantiles and max (null while empty), then "saturated" if any.
  void WriteHistogramMembers(JsonWriter& out, const HistogramSnapshot& histogram, bool durations);
  void WriteHistogram(JsonWriter& out, const HistogramSnapshot& histogram, bool durations);
}
