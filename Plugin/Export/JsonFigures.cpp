#include "Export/JsonFigures.h"

#include <cmath>

namespace IngestPerf
{
  const Quantile kQuantiles[kQuantileCount] = {{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}, {"p99.9", 0.999}};

  double RoundTo(double value, double resolution)
  {
    return std::round(value / resolution) * resolution;
  }

  void WriteUnobservable(JsonWriter& out, const char* reason)
  {
    out.BeginObject();
    out.Member("observable", false);
    out.Member("reason", reason);
    out.EndObject();
  }

  double MeanMs(uint64_t sumNs, uint64_t count)
  {
    return count == 0 ? 0.0 : RoundTo(static_cast<double>(sumNs) / static_cast<double>(count) / 1e6, 0.001);
  }

  // count, sum, mean, min, the quantiles and max (null while empty), then "saturated" if any.
  void WriteHistogramMembers(JsonWriter& out, const HistogramSnapshot& histogram, bool durations)
  {
    out.Member("count", histogram.Count());
    constexpr size_t kCount = sizeof(kQuantiles) / sizeof(kQuantiles[0]);
    if (histogram.Count() == 0)
    {
      for (const char* name : {"sum", "mean", "min"})
      {
        out.Member(name, nullptr);
      }
      for (const Quantile& quantile : kQuantiles)
      {
        out.Member(quantile.name, nullptr);
      }
      out.Member("max", nullptr);
    }
    else
    {
      const auto value = [&out, durations](int64_t v) {
        durations ? out.Real(NanosecondsToMilliseconds(v)) : out.Int(v);
      };
      out.Key("sum");
      durations ? out.Real(NanosecondsToMilliseconds(static_cast<int64_t>(histogram.Sum())))
                : out.UInt(histogram.Sum());
      out.Key("mean");
      durations ? out.Real(NanosecondsToMilliseconds(std::llround(histogram.Mean())))
                : out.Real(RoundTo(histogram.Mean(), 1));
      out.Key("min");
      value(histogram.Min());
      double levels[kCount];
      int64_t values[kCount];
      for (size_t i = 0; i < kCount; i++)
      {
        levels[i] = kQuantiles[i].q;
      }
      histogram.ValuesAtQuantiles(levels, kCount, values);
      for (size_t i = 0; i < kCount; i++)
      {
        out.Key(kQuantiles[i].name);
        value(values[i]);
      }
      out.Key("max");
      value(histogram.Max());
    }
    if (histogram.Saturated() != 0)
    {
      out.Member("saturated", histogram.Saturated());
    }
  }

  void WriteHistogram(JsonWriter& out, const HistogramSnapshot& histogram, bool durations)
  {
    out.BeginObject();
    WriteHistogramMembers(out, histogram, durations);
    out.EndObject();
  }

  double Seconds(int64_t ns)
  {
    return RoundTo(static_cast<double>(ns) / 1e9, 0.001);
  }


  double NanosecondsToMilliseconds(int64_t ns)
  {
    return static_cast<double>(std::llround(static_cast<double>(ns) / 100.0)) / 10000.0;
  }
}
