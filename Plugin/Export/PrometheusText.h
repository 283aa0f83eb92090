// The Prometheus text exposition (format 0.0.4) as PrometheusExporter writes it: the answer's text in
// its own pages, numbers and seconds without a detour through floating point, escaped label values,
// and the lines of a sample, a summary, a histogram on a ladder of `le` bounds and a gauge.
#pragma once

#include "Metrics/Histogram.h"
#include "Platform/MappedText.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace IngestPerf
{
  // One `le` of the fixed ladder: the internal bucket boundary just at or below a 1-2-5 step from
  // 100 us to 100 s (a store or a gap below 100 us is in the first bucket). Durations are whole
  // nanoseconds, so "<= boundary - 1 ns" counts exactly the buckets below the boundary: every
  // exported cumulative count is exact.
  struct PrometheusBucketBound
  {
    uint64_t nominalNs;   // the 1-2-5 step
    uint64_t boundaryNs;  // Histogram::BucketLowest(bucketIndex) <= nominalNs
    size_t bucketIndex;
    std::string le;  // boundaryNs - 1 ns, in seconds
  };

  namespace PrometheusFormat
  {
    // The answer being written, in its own pages (MappedText): a 1 MB text built in a std::string
    // came from malloc, and freeing it raised glibc's mmap and trim thresholds for good (every
    // thread's heap then keeps what later answers leave). What the helpers below use of a string.
    class PrometheusText
    {
    public:
      explicit PrometheusText(MappedText& text) :
        text_(text)
      {
      }
      PrometheusText& operator+=(const char* text)
      {
        text_.Append(text, std::strlen(text));
        return *this;
      }
      PrometheusText& operator+=(const std::string& text)
      {
        text_.Append(text.data(), text.size());
        return *this;
      }
      PrometheusText& operator+=(char c)
      {
        text_.Append(c);
        return *this;
      }
      void append(const char* begin, const char* end) { text_.Append(begin, static_cast<size_t>(end - begin)); }
      void append(const char* text, size_t count) { text_.Append(text, count); }

    private:
      MappedText& text_;
    };

    template <typename Text>
    void AppendUnsigned(Text& out, uint64_t value)
    {
      char buffer[24];
      const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
      out.append(buffer, result.ptr);
    }

    template <typename Text>
    void AppendSeconds(Text& out, uint64_t ns)
    {
      AppendUnsigned(out, ns / 1000000000);
      uint64_t fraction = ns % 1000000000;
      if (fraction == 0)
      {
        return;
      }
      char digits[10] = {'.', '0', '0', '0', '0', '0', '0', '0', '0', '0'};
      for (int i = 9; i >= 1; i--)
      {
        digits[i] = static_cast<char>('0' + fraction % 10);
        fraction /= 10;
      }
      size_t length = 10;
      while (digits[length - 1] == '0')
      {
        length--;
      }
      out.append(digits, length);
    }

    template <typename Text>
    void AppendEscaped(Text& out, const std::string& value)
    {
      for (char c : value)
      {
        switch (c)
        {
          case '\\':
            out += "\\\\";
            break;
          case '"':
            out += "\\\"";
            break;
          case '\n':
            out += "\\n";
            break;
          default:
            out += c;
        }
      }
    }

    void AppendHeader(PrometheusText& out, const char* name, const char* type, const char* help);
    // `labels` is the text between the braces, already escaped: `a="x",b="y"` or empty.
    void AppendSample(PrometheusText& out, const char* name, const char* suffix, const std::string& labels,
                      const char* extraLabel, const std::string& extraValue);

    // A ladder and its bucket indexes, made once.
    struct Ladder
    {
      explicit Ladder(const std::vector<PrometheusBucketBound>& bounds) :
        bounds(bounds)
      {
        for (const PrometheusBucketBound& bound : bounds)
        {
          indexes.push_back(bound.bucketIndex);
        }
      }
      const std::vector<PrometheusBucketBound>& bounds;
      std::vector<size_t> indexes;
    };


    void AppendSummary(PrometheusText& out, const char* name, const std::string& labels, uint64_t count, uint64_t ns);
    void AppendHistogram(PrometheusText& out, const char* name, const std::string& labels,
                         const HistogramSnapshot& histogram, const Ladder& steps);
    void AppendGauge(PrometheusText& out, const char* name, const char* help, const std::string& value);
  }
}
