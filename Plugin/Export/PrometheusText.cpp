#include "Export/PrometheusText.h"

#include <array>

namespace IngestPerf
{
  namespace PrometheusFormat
  {
    void AppendHeader(PrometheusText& out, const char* name, const char* type, const char* help)
    {
      out += "# HELP ";
      out += name;
      out += ' ';
      out += help;
      out += "\n# TYPE ";
      out += name;
      out += ' ';
      out += type;
      out += '\n';
    }

    void AppendSample(PrometheusText& out, const char* name, const char* suffix, const std::string& labels,
                      const char* extraLabel, const std::string& extraValue)
    {
      out += name;
      out += suffix;
      if (!labels.empty() || extraLabel != nullptr)
      {
        out += '{';
        out += labels;
        if (extraLabel != nullptr)
        {
          if (!labels.empty())
          {
            out += ',';
          }
          out += extraLabel;
          out += "=\"";
          out += extraValue;
          out += '"';
        }
        out += '}';
      }
      out += ' ';
    }

    void AppendSummary(PrometheusText& out, const char* name, const std::string& labels, uint64_t count, uint64_t ns)
    {
      AppendSample(out, name, "_sum", labels, nullptr, std::string());
      AppendSeconds(out, ns);
      out += '\n';
      AppendSample(out, name, "_count", labels, nullptr, std::string());
      AppendUnsigned(out, count);
      out += '\n';
    }

    void AppendHistogram(PrometheusText& out, const char* name, const std::string& labels,
                         const HistogramSnapshot& histogram, const Ladder& steps)
    {
      const std::vector<PrometheusBucketBound>& ladder = steps.bounds;
      std::array<uint64_t, 64> counts{};
      histogram.CountsBelow(steps.indexes.data(), steps.indexes.size(), counts.data());
      for (size_t i = 0; i < ladder.size(); i++)
      {
        AppendSample(out, name, "_bucket", labels, "le", ladder[i].le);
        AppendUnsigned(out, counts[i]);
        out += '\n';
      }
      AppendSample(out, name, "_bucket", labels, "le", "+Inf");
      AppendUnsigned(out, histogram.Count());
      out += '\n';
      AppendSummary(out, name, labels, histogram.Count(), histogram.Sum());
    }

    void AppendGauge(PrometheusText& out, const char* name, const char* help, const std::string& value)
    {
      AppendHeader(out, name, "gauge", help);
      out += name;
      out += ' ';
      out += value;
      out += '\n';
    }

  }
}
