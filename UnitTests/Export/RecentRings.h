// Rings of recent instances for the tests of /perf/slowest and /perf/trace: random ones (every
// transport, phases measured or not, split or not, starts and durations that tie, labels from a
// pool that holds bytes of every kind) and the edge cases (empty, one instance, a full ring), with
// what the tests compare them by: the first place two documents differ.
#pragma once

#include "Labels/LabelCatalog.h"
#include "Recording/IngestReport.h"

#include <json/value.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace IngestPerf
{
  // Label values a sender may use: plain, quoted, controls, malformed and valid UTF-8 of every
  // length, a surrogate, nothing, and a long one.
  inline const std::vector<std::string>& OddLabelValues()
  {
    static const std::vector<std::string> values = {
      "CT01",
      "MR 02",
      "\"quoted\" \\ back\\slash",
      "tab\there\nnew line\r",
      std::string("nul\0inside", 10),
      "\x01\x02\x1f\x7f",
      "\xff\xfe\x80",
      "caf\xc3\xa9",
      "\xc3",                   // cut in the middle of a character
      "\xe2\x82\xac euro",      // three bytes
      "\xf0\x9f\x98\x80 face",  // beyond the BMP: a surrogate pair in JSON
      "\xed\xa0\x80",           // an encoded surrogate
      "\xc0\xaf",               // overlong
      "</script><b>",
      "",
      "1.2.840.10008.1.2.1",
      "1.2.840.10008.5.1.4.1.1.2",
      "1.2.3.4.5.999",
      "10.1.2.3",
      "::1",
      std::string(300, 'A') + "\xc3\xa9",  // longer than any AET
    };
    return values;
  }

  class RecentRing
  {
  public:
    static constexpr int64_t kMs = 1000000;
    static constexpr int64_t kNow = 5000000 * kMs;            // monotonic
    static constexpr int64_t kNowWall = 1795000000000 * kMs;  // 2026-11-18

    // maxLabelValues: a small one overflows the dictionaries ("(other)").
    explicit RecentRing(uint32_t seed, size_t maxLabelValues = 64) :
      catalog_(maxLabelValues),
      random_(seed)
    {
      report.collected = true;
      report.nowNs = kNow;
      report.nowWallNs = kNowWall;
      report.catalog = &catalog_;
      report.ring.capacity = 4096;
    }

    // `count` random instances over the last `spanSeconds` (and a little before), on `threads`
    // threads; labels from OddLabelValues() when `oddLabels`, else from a plain few.
    void AddRandom(size_t count, int64_t spanSeconds, uint32_t threads, bool oddLabels)
    {
      for (size_t i = 0; i < count; i++)
      {
        Add(RandomInstance(spanSeconds, threads, oddLabels));
      }
    }

    void Add(const RecentInstance& instance)
    {
      RecentInstance added = instance;
      added.sequence = report.ring.instances.size();
      report.ring.instances.push_back(added);
      report.ring.held = report.ring.instances.size();
      report.ring.pushed = report.ring.instances.size();
      int64_t oldest = report.ring.instances[0].measurement.storedNs;
      for (const RecentInstance& each : report.ring.instances)
      {
        oldest = std::min(oldest, each.measurement.storedNs);
      }
      report.ring.oldestStoredNs = oldest;
      report.matched = report.ring.instances.size();
    }

    RecentInstance RandomInstance(int64_t spanSeconds, uint32_t threads, bool oddLabels)
    {
      const Transport transport = static_cast<Transport>(Below(kTransportCount));
      RawLabels raw;
      const std::vector<std::string>& odd = OddLabelValues();
      static const std::vector<std::string> plain = {"CT01", "MR01", "US01", "127.0.0.1", "1.2.840.10008.1.2.1"};
      const std::vector<std::string>& pool = oddLabels ? odd : plain;
      const char** fields[] = {&raw.remoteAet,      &raw.remoteIp,     &raw.calledAet,
                               &raw.receivedSyntax, &raw.storedSyntax, &raw.sopClass};
      for (const char** field : fields)
      {
        *field = Chance(0.1) ? nullptr : pool[Below(pool.size())].c_str();
      }

      // Times on a coarse grid, so that starts and durations tie (the sort's last key decides).
      const auto grid = [this](int64_t spanNs) { return static_cast<int64_t>(Below(50)) * (spanNs / 50); };
      InstanceMeasurement measurement;
      measurement.hasTimeline = Chance(0.9);
      measurement.startNs = kNow - grid((spanSeconds + 2) * 1000 * kMs);
      measurement.storedNs = measurement.startNs + grid(200 * kMs);
      measurement.storedBytes = Chance(0.1) ? 0 : Below(1u << 30) * (Chance(0.5) ? 1u : 4096u);
      const int64_t total = measurement.storedNs - measurement.startNs;
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        const Phase phase = static_cast<Phase>(p);
        if (phase == Phase::ServerTotal || Chance(0.35))
        {
          continue;
        }
        const int64_t start = measurement.startNs + (total == 0 ? 0 : grid(total) / 2);
        measurement.Set(phase, start, Chance(0.1) ? 0 : grid(total + 30 * kMs) + static_cast<int64_t>(Below(1000)));
      }
      measurement.Set(Phase::ServerTotal, measurement.startNs, total);
      if (Chance(0.3))
      {
        measurement.Set(Phase::AssociationGap, measurement.startNs - grid(900 * kMs), grid(900 * kMs));
      }
      if (Chance(0.3))
      {
        measurement.Set(Phase::RequestGap, measurement.startNs - grid(90 * kMs), grid(90 * kMs) + 7);
      }
      // Split phases: on some instances, some phases (serverTotal's parts or not), the run delay
      // known or not.
      if (Chance(0.4))
      {
        for (size_t p = 0; p < kPhaseCount; p++)
        {
          const Phase phase = static_cast<Phase>(p);
          if (measurement.Phase(phase) != InstanceMeasurement::kNotMeasured && Chance(0.6))
          {
            const int64_t ns = measurement.Phase(phase);
            const int64_t cpu = ns == 0 ? 0 : static_cast<int64_t>(Below(static_cast<uint64_t>(ns) + 1));
            const int64_t delay = Chance(0.3) ? InstanceMeasurement::kNotMeasured
                                              : static_cast<int64_t>(Below(static_cast<uint64_t>(ns - cpu) + 1));
            measurement.SetParts(phase, cpu, delay);
          }
        }
      }

      static const uint32_t kThreadNumbers[] = {1, 7, 21, 4242, 99999, 4294967295u};
      const uint32_t thread = Chance(0.1) ? kThreadNumbers[Below(6)] : 100 + static_cast<uint32_t>(Below(threads));
      std::string id;
      if (oddLabels && Chance(0.2))
      {
        id = odd[Below(odd.size())];
      }
      else if (!Chance(0.05))
      {
        static const char hex[] = "0123456789abcdef";
        for (int k = 0; k < 44; k++)
        {
          id += (k % 9 == 8) ? '-' : hex[Below(16)];
        }
      }
      RecentInstance instance;
      FillRecentInstance(instance, measurement, kNowWall - (kNow - measurement.startNs),
                         catalog_.Intern(transport, raw, measurement.storedBytes),
                         static_cast<Outcome>(Below(kOutcomeCount)), thread, id.c_str());
      return instance;
    }

    uint64_t Below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(random_); }
    bool Chance(double p) { return std::bernoulli_distribution(p)(random_); }

    LabelCatalog& Catalog() { return catalog_; }

    RecentReport report;

  private:
    LabelCatalog catalog_;
    std::mt19937_64 random_;
  };

  // "" when `a` and `b` are the same document; else where they first differ, and how.
  inline std::string FirstDifference(const Json::Value& a, const Json::Value& b, const std::string& path = "$")
  {
    if (a.type() != b.type())
    {
      return path + ": types " + std::to_string(a.type()) + " and " + std::to_string(b.type());
    }
    if (a.isObject())
    {
      if (a.getMemberNames() != b.getMemberNames())
      {
        return path + ": members " + a.toStyledString().substr(0, 400) + " and " + b.toStyledString().substr(0, 400);
      }
      for (const std::string& name : a.getMemberNames())
      {
        const std::string difference = FirstDifference(a[name], b[name], path + "." + name);
        if (!difference.empty())
        {
          return difference;
        }
      }
      return "";
    }
    if (a.isArray())
    {
      if (a.size() != b.size())
      {
        return path + ": sizes " + std::to_string(a.size()) + " and " + std::to_string(b.size());
      }
      for (Json::ArrayIndex i = 0; i < a.size(); i++)
      {
        const std::string difference = FirstDifference(a[i], b[i], path + "[" + std::to_string(i) + "]");
        if (!difference.empty())
        {
          return difference;
        }
      }
      return "";
    }
    return a == b ? "" : path + ": " + a.toStyledString() + " and " + b.toStyledString();
  }
}
