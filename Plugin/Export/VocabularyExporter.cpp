#include "Export/VocabularyExporter.h"

#include "Platform/JsonText.h"

#include "Metrics/TimeWindows.h"
#include "Vocabulary/IngestVocabulary.h"
#include "Vocabulary/Routes.h"

namespace IngestPerf
{
  namespace
  {
    Json::Value PhaseTransports(Phase phase)
    {
      Json::Value transports = Json::arrayValue;
      for (size_t t = 0; t < kTransportCount; t++)
      {
        if (PhaseExistsOn(phase, static_cast<Transport>(t)))
        {
          transports.append(TransportName(static_cast<Transport>(t)));
        }
      }
      return transports;
    }

    // from, to, partOfServerTotal, place, parent (null when none), transports.
    Json::Value ExportPhase(Phase phase)
    {
      const PhaseDefinition& definition = DefinitionOf(phase);
      Json::Value value;
      value["from"_key] = definition.from;
      value["to"_key] = definition.to;
      value["partOfServerTotal"_key] = PhasePartOfServerTotal(phase);
      value["place"_key] = PhasePlaceName(definition.place);
      value["parent"_key] =
        definition.parent == Phase::Count ? Json::Value() : Json::Value(DefinitionOf(definition.parent).name);
      value["transports"_key] = PhaseTransports(phase);
      value["inRecentInstances"_key] = PhaseInRecentInstances(phase);
      const char* noParts = PhasePartsAbsenceReason(phase);
      value["splitIntoParts"_key] = noParts == nullptr;
      if (noParts != nullptr)
      {
        value["notSplitBecause"_key] = noParts;
      }
      return value;
    }

    Json::Value Named(const NameDefinition& definition)
    {
      Json::Value value;
      value["name"_key] = definition.name;
      value["definition"_key] = definition.meaning;
      return value;
    }

    template <typename Enum, size_t count>
    Json::Value NamesInOrder()
    {
      Json::Value names = Json::arrayValue;
      for (size_t i = 0; i < count; i++)
      {
        names.append(DefinitionOf(static_cast<Enum>(i)).name);
      }
      return names;
    }

    Json::Value ExportLabel(LabelDimension dimension)
    {
      Json::Value value = Named(DefinitionOf(dimension));
      if (dimension == LabelDimension::Transport)
      {
        value["values"_key] = NamesInOrder<Transport, kTransportCount>();
      }
      else if (dimension == LabelDimension::SizeClass)
      {
        value["values"_key] = Json::arrayValue;
        for (size_t s = 0; s < kSizeClassCount; s++)
        {
          value["values"_key].append(SizeClassName(static_cast<SizeClass>(s)));
        }
      }
      return value;
    }

    Json::Value ExportRoute(Route route)
    {
      const RouteDefinition& definition = DefinitionOf(route);
      Json::Value value;
      value["path"_key] = definition.path;
      value["method"_key] = RouteMethodName(definition.method);
      value["answer"_key] = definition.answer;
      return value;
    }
  }


  Json::Value ExportVocabulary()
  {
    Json::Value vocabulary;
    vocabulary["transports"_key] = Json::arrayValue;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      vocabulary["transports"_key].append(Named(DefinitionOf(static_cast<Transport>(t))));
    }
    vocabulary["phases"_key] = Json::arrayValue;
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      Json::Value phase = ExportPhase(static_cast<Phase>(p));
      phase["name"_key] = DefinitionOf(static_cast<Phase>(p)).name;
      vocabulary["phases"_key].append(phase);
    }
    vocabulary["phaseParts"_key] = Json::arrayValue;
    for (size_t p = 0; p < kPhasePartCount; p++)
    {
      vocabulary["phaseParts"_key].append(Named(DefinitionOf(static_cast<PhasePart>(p))));
    }
    vocabulary["outcomes"_key] = Json::arrayValue;
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      vocabulary["outcomes"_key].append(Named(DefinitionOf(static_cast<Outcome>(o))));
    }
    vocabulary["failureReasons"_key] = Json::arrayValue;
    for (size_t r = 0; r < kFailureReasonCount; r++)
    {
      vocabulary["failureReasons"_key].append(Named(DefinitionOf(static_cast<FailureReason>(r))));
    }
    vocabulary["labels"_key] = Json::arrayValue;
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      vocabulary["labels"_key].append(ExportLabel(static_cast<LabelDimension>(d)));
    }
    vocabulary["windows"_key] = Json::arrayValue;
    for (size_t w = 0; w < kWindowCount; w++)
    {
      vocabulary["windows"_key].append(WindowName(static_cast<Window>(w)));
    }
    vocabulary["routes"_key] = Json::arrayValue;
    for (size_t r = 0; r < kRouteCount; r++)
    {
      vocabulary["routes"_key].append(ExportRoute(static_cast<Route>(r)));
    }
    return vocabulary;
  }


  namespace
  {
    Json::Value BuildDefinitions()
    {
      Json::Value definitions;
      for (size_t p = 0; p < kPhaseCount; p++)
      {
        definitions["phases"_key][DefinitionOf(static_cast<Phase>(p)).name] = ExportPhase(static_cast<Phase>(p));
      }
      for (size_t p = 0; p < kPhasePartCount; p++)
      {
        const NameDefinition& part = DefinitionOf(static_cast<PhasePart>(p));
        definitions["phaseParts"_key][part.name] = part.meaning;
      }
      for (size_t o = 0; o < kOutcomeCount; o++)
      {
        const OutcomeDefinition& outcome = DefinitionOf(static_cast<Outcome>(o));
        definitions["outcomes"_key][outcome.name] = outcome.meaning;
      }
      for (size_t r = 0; r < kFailureReasonCount; r++)
      {
        const OutcomeDefinition& reason = DefinitionOf(static_cast<FailureReason>(r));
        definitions["failureReasons"_key][reason.name] = reason.meaning;
      }
      Json::Value& order = definitions["order"_key];
      order["transports"_key] = NamesInOrder<Transport, kTransportCount>();
      order["phases"_key] = NamesInOrder<Phase, kPhaseCount>();
      order["phaseParts"_key] = NamesInOrder<PhasePart, kPhasePartCount>();
      order["outcomes"_key] = NamesInOrder<Outcome, kOutcomeCount>();
      order["failureReasons"_key] = NamesInOrder<FailureReason, kFailureReasonCount>();
      return definitions;
    }
  }


  const Json::Value& ExportDefinitions()
  {
    // Built once: the vocabulary never changes, and /perf/stats carries it in every answer.
    static const Json::Value definitions = BuildDefinitions();
    return definitions;
  }
}
