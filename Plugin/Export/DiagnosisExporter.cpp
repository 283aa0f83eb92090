#include "Export/DiagnosisExporter.h"

#include "Platform/JsonText.h"

#include "Export/JsonExporter.h"

#include <cmath>
#include <cstdio>
#include <utility>

namespace IngestPerf
{
  namespace
  {
    double Round(double value, double step = 0.001)
    {
      return std::round(value / step) * step;
    }

    // Json::Value keeps an object's names sorted (bytewise, capitals first): the answer lists the
    // evidence so whatever order a rule wrote it in, as it always has.
    Json::Value ExportEvidence(const Evidence& evidence)
    {
      switch (evidence.GetKind())
      {
        case Evidence::Kind::Bool:
          return Json::Value(evidence.AsBool());
        case Evidence::Kind::Signed:
          return Json::Value(Json::Int64(evidence.AsSigned()));
        case Evidence::Kind::Unsigned:
          return Json::Value(Json::UInt64(evidence.AsUnsigned()));
        case Evidence::Kind::Real:
          return Json::Value(evidence.AsReal());
        case Evidence::Kind::Text:
          return Json::Value(evidence.AsText());
        case Evidence::Kind::List:
        {
          Json::Value list = Json::arrayValue;
          for (const Evidence& element : evidence.Values())
          {
            list.append(ExportEvidence(element));
          }
          return list;
        }
        case Evidence::Kind::Object:
        {
          Json::Value object = Json::objectValue;
          for (size_t i = 0; i < evidence.Size(); i++)
          {
            object[evidence.Names()[i]] = ExportEvidence(evidence.Values()[i]);
          }
          return object;
        }
        case Evidence::Kind::Null:
          break;
      }
      return Json::Value(Json::nullValue);
    }

    Json::Value ExportConfigurationValue(const ConfigurationValue& value)
    {
      switch (value.GetKind())
      {
        case ConfigurationValue::Kind::Bool:
          return Json::Value(value.AsBool());
        case ConfigurationValue::Kind::Unsigned:
          return Json::Value(Json::UInt64(value.AsUnsigned()));
        case ConfigurationValue::Kind::Text:
          break;
      }
      return Json::Value(value.AsText());
    }

    // {"action", "configuration": {key: value}, "effect"}, each only when the fix has it.
    Json::Value ExportFix(const Fix& fix)
    {
      Json::Value value = Json::objectValue;
      for (const auto& [key, setting] : fix.configuration)
      {
        value["configuration"_key][key] = ExportConfigurationValue(setting);
      }
      if (!fix.action.empty())
      {
        value["action"_key] = fix.action;
      }
      if (!fix.effect.empty())
      {
        value["effect"_key] = fix.effect;
      }
      return value;
    }

    Json::Value ExportFinding(const Finding& finding)
    {
      Json::Value value;
      value["id"_key] = finding.id;
      value["transport"_key] = finding.transport;
      value["verdict"_key] = finding.verdict;
      value["cost"_key] = CostKindName(finding.costKind);
      value["costMsPerInstance"_key] = finding.costKind == CostKind::Unobservable
                                         ? Json::Value(Json::nullValue)
                                         : Json::Value(finding.costMsPerInstance);
      value["shareOfCycle"_key] =
        finding.shareOfCycle < 0 ? Json::Value(Json::nullValue) : Json::Value(finding.shareOfCycle);
      if (finding.instancesLost != 0)
      {
        value["instancesLost"_key] = Json::UInt64(finding.instancesLost);
      }
      value["evidence"_key] = ExportEvidence(finding.evidence);
      value["explanation"_key] = finding.explanation;
      value["fix"_key] = ExportFix(finding.fix);
      value["confidence"_key] = finding.confidence;
      value["confidenceReason"_key] = finding.confidenceReason;
      return value;
    }

    Json::Value ExportSummary(const TransportFigures& transport, double activeSeconds, bool association)
    {
      Json::Value value;
      value["stored"_key] = Json::UInt64(transport.stored);
      value["instancesPerSecond"_key] =
        activeSeconds > 0 ? Round(static_cast<double>(transport.stored) / activeSeconds, 0.01) : 0.0;
      const PhaseFigures& server = transport[Phase::ServerTotal];
      value["serverTotalMs"_key]["mean"_key] = Round(server.meanMs);
      value["serverTotalMs"_key]["p50"_key] = Round(server.p50Ms);
      value["serverTotalMs"_key]["p99"_key] = Round(server.p99Ms);
      if (association)
      {
        const PhaseFigures& gap = transport[Phase::AssociationGap];
        value["associationGapMs"_key]["mean"_key] = Round(gap.meanMs);
        value["associationGapMs"_key]["p50"_key] = Round(gap.p50Ms);
        value["associationGapMs"_key]["p99"_key] = Round(gap.p99Ms);
      }
      return value;
    }

    std::string NothingStandsOut(const DiagnosisInput& input)
    {
      std::string text = "Nothing stands out";
      bool first = true;
      for (size_t t = 0; t < kTransportCount; t++)
      {
        const TransportFigures& transport = input.transports[t];
        if (transport.stored == 0)
        {
          continue;
        }
        char part[256];
        const Transport which = static_cast<Transport>(t);
        if (which == Transport::Dicom && transport[Phase::AssociationGap].count > 0)
        {
          // The means, as the page's "Where the time goes" shows them, and the gap's tail with its median.
          const PhaseFigures& gap = transport[Phase::AssociationGap];
          std::snprintf(part, sizeof(part),
                        "%s %s: %llu stored, serverTotal p50 %.1f ms, gap mean %.1f ms (p50 %.1f, p90 %.1f)",
                        first ? ":" : ";", TransportName(which), static_cast<unsigned long long>(transport.stored),
                        transport[Phase::ServerTotal].p50Ms, gap.meanMs, gap.p50Ms, gap.p90Ms);
        }
        else
        {
          std::snprintf(part, sizeof(part), "%s %s: %llu stored, serverTotal p50 %.1f ms", first ? ":" : ";",
                        TransportName(which), static_cast<unsigned long long>(transport.stored),
                        transport[Phase::ServerTotal].p50Ms);
        }
        text += part;
        first = false;
      }
      return first ? NothingStored(input) : text;
    }

    // What the state of the plugin says before any figure: nothing is measured at all.
    std::string StateVerdict(const PluginStatus& status)
    {
      if (status.state == PluginState::Disabled)
      {
        return "The plugin is disabled (" + status.stateReason +
               "): it measures nothing, whatever Orthanc stores. Set IngestPerf.Enable to true and restart Orthanc "
               "to time ingest";
      }
      return "The plugin is inert: " + status.stateReason +
             ". It measures nothing and Orthanc runs without it; fix the cause and restart Orthanc";
    }
  }


  std::string NothingStored(const DiagnosisInput& input)
  {
    const SinceReset& history = input.sinceReset;
    if (history.stored == 0)
    {
      return "Nothing to diagnose: no instance stored since " + IsoUtc(history.sinceWallNs);
    }
    if (input.window == "sinceReset")
    {
      // Stored, but not what the filter asked for.
      return "Nothing to diagnose: no instance matches the query; " + std::to_string(history.stored) +
             " stored since " + IsoUtc(history.sinceWallNs);
    }
    return "No instance stored in " + WindowText(input.window) + "; " + std::to_string(history.stored) +
           " stored since " + IsoUtc(history.sinceWallNs) + ", the last at " + IsoUtc(history.lastStoredWallNs);
  }


  namespace
  {
  }


  Json::Value ExportDiagnosis(const Diagnosis& diagnosis, const DiagnosisInput& input, const PluginStatus& status)
  {
    Json::Value result;
    result["plugin"_key] = "ingest-perf";
    result["version"_key] = status.pluginVersion;
    result["orthancVersion"_key] = status.orthancVersion;
    result["state"_key] = PluginStateName(status.state);
    result["reason"_key] = status.stateReason;
    result["sinceReset"_key] = ExportSinceReset(input.sinceReset);
    result["window"_key] = input.window;
    result["seconds"_key] = Round(input.seconds);
    result["activeSeconds"_key] = Round(input.activeSeconds);
    // The verdict is the costliest finding whose cost is known; findings resting on counts alone
    // (listed last) do not make a verdict of their own: their effect could not be measured.
    const Finding* top = nullptr;
    std::string unmeasured;
    for (const Finding& finding : diagnosis.findings)
    {
      if (finding.costKind != CostKind::Unobservable)
      {
        top = top == nullptr ? &finding : top;
      }
      else
      {
        unmeasured += (unmeasured.empty() ? "" : ", ") + finding.id;
      }
    }
    result["verdict"_key] = !status.Running() ? StateVerdict(status)
                            : top != nullptr  ? top->verdict
                            : unmeasured.empty()
                              ? NothingStandsOut(input)
                              : NothingStandsOut(input) + " (a finding without a measurable cost: " + unmeasured + ")";
    Json::Value& findings = result["findings"_key];
    findings = Json::arrayValue;
    for (const Finding& finding : diagnosis.findings)
    {
      findings.append(ExportFinding(finding));
    }
    Json::Value& summary = result["summary"_key];
    summary = Json::objectValue;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      if (input.transports[t].stored > 0)
      {
        const Transport transport = static_cast<Transport>(t);
        summary[TransportName(transport)] =
          ExportSummary(input.transports[t], input.activeSeconds, transport == Transport::Dicom);
      }
    }
    Json::Value& checks = result["rules"_key];
    checks = Json::arrayValue;
    for (const RuleCheck& check : diagnosis.checks)
    {
      Json::Value value;
      value["id"_key] = check.id;
      value["fired"_key] = check.fired;
      value["reason"_key] = check.reason;
      checks.append(std::move(value));
    }
    result["documentation"_key] = "docs/diagnosis.md";
    return result;
  }
}
