// The diagnosis' inputs the rules' tests are built from: a healthy Orthanc, and the figures the
// tests change in it (UnitTests/Diagnosis/*RulesTests.cpp).
#pragma once

#include "Diagnosis/DiagnosisInput.h"
#include "Diagnosis/DiagnosisRules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

namespace IngestPerf
{
  namespace RulesTests
  {
    inline PhaseFigures Phase_(uint64_t count, double meanMs, double p50Ms = -1)
    {
      PhaseFigures figures;
      figures.count = count;
      figures.meanMs = meanMs;
      figures.p50Ms = p50Ms < 0 ? meanMs : p50Ms;
      figures.p90Ms = meanMs * 1.2;
      figures.p99Ms = meanMs * 1.5;
      figures.maxMs = meanMs * 2;
      figures.sumMs = meanMs * static_cast<double>(count);
      return figures;
    }

    inline PhaseFigures& At(TransportFigures& transport, Phase phase)
    {
      return transport.phases[static_cast<size_t>(phase)];
    }

    inline void SetStored(TransportFigures& transport, uint64_t stored)
    {
      transport.stored = stored;
      transport.outcomes[static_cast<size_t>(Outcome::Stored)] = stored;
    }

    // A healthy Orthanc on the development machine: 200 HTTP instances and 200 by one C-STORE
    // association with TCP_NODELAY on both sides, over 20 s of ingest.
    inline DiagnosisInput Healthy()
    {
      DiagnosisInput input;
      input.window = "5m";
      input.seconds = 300;
      input.activeSeconds = 20;
      input.orthancVersion = "1.12.7";
      input.configuration.orthanc = OrthancVersion::Parse("1.12.7");
      input.configuration.httpCompressionEnabled = false;
      input.dicomTcpNoDelay = true;
      input.dicomConnectionsNow = 0;
      input.httpConnectionsNow = 0;

      TransportFigures& rest = input.transports[static_cast<size_t>(Transport::Rest)];
      SetStored(rest, 200);
      At(rest, Phase::Receive) = Phase_(200, 0.2);
      At(rest, Phase::PreStore) = Phase_(200, 0.3);
      At(rest, Phase::Persist) = Phase_(200, 4.5);
      At(rest, Phase::ServerTotal) = Phase_(200, 5.0);
      rest.receivedBytes = rest.storedBytes = 200 * 525000;

      TransportFigures& dicom = input.transports[static_cast<size_t>(Transport::Dicom)];
      SetStored(dicom, 200);
      At(dicom, Phase::PreStore) = Phase_(200, 0.3);
      At(dicom, Phase::Persist) = Phase_(200, 4.5);
      At(dicom, Phase::ServerTotal) = Phase_(200, 4.8);
      At(dicom, Phase::AssociationGap) = Phase_(199, 2.5);
      dicom.storedBytes = 200 * 525000;
      return input;
    }

    // `all` as GatherDiagnosisInput makes it: the transports merged (means weighted by counts).
    inline DiagnosisInput& Merge(DiagnosisInput& input)
    {
      TransportFigures all;
      for (const TransportFigures& transport : input.transports)
      {
        all.stored += transport.stored;
        for (size_t o = 0; o < kOutcomeCount; o++)
        {
          all.outcomes[o] += transport.outcomes[o];
        }
        for (size_t r = 0; r < kFailureReasonCount; r++)
        {
          all.failures[r] += transport.failures[r];
        }
        for (size_t p = 0; p < kPhaseCount; p++)
        {
          PhaseFigures& target = all.phases[p];
          const PhaseFigures& source = transport.phases[p];
          if (source.count == 0)
          {
            continue;
          }
          target.sumMs += source.sumMs;
          target.count += source.count;
          target.meanMs = target.sumMs / static_cast<double>(target.count);
          target.p50Ms = std::max(target.p50Ms, source.p50Ms);
          target.p99Ms = std::max(target.p99Ms, source.p99Ms);
          // The parts' means, weighted by the split instances.
          PartFigures& parts = target.parts;
          const PartFigures& more = source.parts;
          const double before = static_cast<double>(parts.sampled);
          const double after = before + static_cast<double>(more.sampled);
          if (after > 0)
          {
            const auto weigh = [&](double a, double b) {
              return (a * before + b * static_cast<double>(more.sampled)) / after;
            };
            parts.meanMs = weigh(parts.meanMs, more.meanMs);
            parts.onCpuMs = weigh(parts.onCpuMs, more.onCpuMs);
            parts.waitingForCpuMs = weigh(parts.waitingForCpuMs, more.waitingForCpuMs);
            parts.blockedMs = weigh(parts.blockedMs, more.blockedMs);
            parts.sampled += more.sampled;
            parts.runDelaySampled += more.runDelaySampled;
          }
        }
        all.gapsNearDelayedAck += transport.gapsNearDelayedAck;
        all.gapsNearTwoDelayedAcks += transport.gapsNearTwoDelayedAcks;
        all.gapMsNearDelayedAcks += transport.gapMsNearDelayedAcks;
        all.answersAcceptingCompression += transport.answersAcceptingCompression;
      }
      input.all = all;
      return input;
    }

    inline std::set<std::string> Fired(const DiagnosisInput& input)
    {
      std::set<std::string> fired;
      for (const Finding& finding : Diagnose(input).findings)
      {
        fired.insert(finding.id);
      }
      return fired;
    }

    // What the finding's fix sets the key to; a failure of the test when it does not set it.
    inline ConfigurationValue SetTo(const Finding& finding, const std::string& key)
    {
      const ConfigurationValue* value = finding.fix.Find(key);
      if (value == nullptr)
      {
        ADD_FAILURE() << finding.id << "'s fix does not set " << key;
        return ConfigurationValue("(not set)");
      }
      return *value;
    }

    // A configuration fix measured by ingest_perf/benchmarks/diagnosis_effects.py quotes its figures from there.
    inline bool QuotesItsMeasurement(const Finding& finding)
    {
      return finding.fix.effect.find("docs/measurements/benchmarks.md#the-fixes-of-the-diagnosis-before-and-after") !=
             std::string::npos;
    }

    inline TransportFigures& Dicom(DiagnosisInput& input)
    {
      return input.transports[static_cast<size_t>(Transport::Dicom)];
    }

    inline TransportFigures& Rest(DiagnosisInput& input)
    {
      return input.transports[static_cast<size_t>(Transport::Rest)];
    }

    // Orthanc's side fixed, one C-STORE association of 200 instances whose sender keeps Nagle's
    // algorithm: `stalled` gaps of 44 ms at the timer, the others of 1.1 ms (measured with storescu and
    // Orthanc as senders: gap p50 1-3 ms, p90 44-47, mean 7-14).
    inline DiagnosisInput SenderStalling(uint64_t stalled)
    {
      DiagnosisInput input = Healthy();
      const uint64_t gaps = 199;
      const double sum = static_cast<double>(stalled) * 44.0 + static_cast<double>(gaps - stalled) * 1.1;
      PhaseFigures& gap = At(Dicom(input), Phase::AssociationGap);
      gap = Phase_(gaps, sum / static_cast<double>(gaps), 1.1);
      gap.p90Ms = stalled * 10 >= gaps ? 44.0 : 1.3;
      gap.p99Ms = stalled * 100 >= gaps ? 45.0 : 1.5;
      Dicom(input).gapsNearDelayedAck = stalled;
      Dicom(input).gapMsNearDelayedAcks = static_cast<double>(stalled) * 44.0;
      return input;
    }
  }
}
