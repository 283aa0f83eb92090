#include "Export/VocabularyExporter.h"

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
      value["from"] = definition.from;
      value["to"] = definition.to;
      value["partOfServerTotal"] = PhasePartOfServerTotal(phase);
      value["place"] = PhasePlaceName(definition.place);
      value["parent"] =
        definition.parent == Phase::Count ? Json::Value() : Json::Value(DefinitionOf(definition.parent).name);
      value["transports"] = PhaseTransports(phase);
      value["inRecentInstances"] = PhaseInRecentInstances(phase);
      const char* noParts = PhasePartsAbsenceReason(phase);
      value["splitIntoParts"] = noParts == nullptr;
      if (noParts != nullptr)
      {
        value["notSplitBecause"] = noParts;
      }
      return value;
    }

    Json::Value Named(const NameDefinition& definition)
    {
      Json::Value value;
      value["name"] = definition.name;
      value["definition"] = definition.meaning;
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
        value["values"] = NamesInOrder<Transport, kTransportCount>();
      }
      else if (dimension == LabelDimension::SizeClass)
      {
        value["values"] = Json::arrayValue;
        for (size_t s = 0; s < kSizeClassCount; s++)
        {
          value["values"].append(SizeClassName(static_cast<SizeClass>(s)));
        }
      }
      return value;
    }

    Json::Value ExportRoute(Route route)
    {
      const RouteDefinition& definition = DefinitionOf(route);
      Json::Value value;
      value["path"] = definition.path;
      value["method"] = RouteMethodName(definition.method);
      value["answer"] = definition.answer;
      if (definition.aliasOf != nullptr)
      {
        value["aliasOf"] = definition.aliasOf;
      }
      return value;
    }
  }


  Json::Value ExportVocabulary()
  {
    Json::Value vocabulary;
    vocabulary["transports"] = Json::arrayValue;
    for (size_t t = 0; t < kTransportCount; t++)
    {
      vocabulary["transports"].append(Named(DefinitionOf(static_cast<Transport>(t))));
    }
    vocabulary["phases"] = Json::arrayValue;
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      Json::Value phase = ExportPhase(static_cast<Phase>(p));
      phase["name"] = DefinitionOf(static_cast<Phase>(p)).name;
      vocabulary["phases"].append(phase);
    }
    vocabulary["phaseParts"] = Json::arrayValue;
    for (size_t p = 0; p < kPhasePartCount; p++)
    {
      vocabulary["phaseParts"].append(Named(DefinitionOf(static_cast<PhasePart>(p))));
    }
    vocabulary["outcomes"] = Json::arrayValue;
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      vocabulary["outcomes"].append(Named(DefinitionOf(static_cast<Outcome>(o))));
    }
    vocabulary["failureReasons"] = Json::arrayValue;
    for (size_t r = 0; r < kFailureReasonCount; r++)
    {
      vocabulary["failureReasons"].append(Named(DefinitionOf(static_cast<FailureReason>(r))));
    }
    vocabulary["labels"] = Json::arrayValue;
    for (size_t d = 0; d < kLabelDimensions; d++)
    {
      vocabulary["labels"].append(ExportLabel(static_cast<LabelDimension>(d)));
    }
    vocabulary["windows"] = Json::arrayValue;
    for (size_t w = 0; w < kWindowCount; w++)
    {
      vocabulary["windows"].append(WindowName(static_cast<Window>(w)));
    }
    vocabulary["routes"] = Json::arrayValue;
    for (size_t r = 0; r < kRouteCount; r++)
    {
      vocabulary["routes"].append(ExportRoute(static_cast<Route>(r)));
    }
    return vocabulary;
  }


  Json::Value ExportDefinitions()
  {
    Json::Value definitions;
    for (size_t p = 0; p < kPhaseCount; p++)
    {
      definitions["phases"][DefinitionOf(static_cast<Phase>(p)).name] = ExportPhase(static_cast<Phase>(p));
    }
    for (size_t p = 0; p < kPhasePartCount; p++)
    {
      const NameDefinition& part = DefinitionOf(static_cast<PhasePart>(p));
      definitions["phaseParts"][part.name] = part.meaning;
    }
    for (size_t o = 0; o < kOutcomeCount; o++)
    {
      const OutcomeDefinition& outcome = DefinitionOf(static_cast<Outcome>(o));
      definitions["outcomes"][outcome.name] = outcome.meaning;
    }
    for (size_t r = 0; r < kFailureReasonCount; r++)
    {
      const OutcomeDefinition& reason = DefinitionOf(static_cast<FailureReason>(r));
      definitions["failureReasons"][reason.name] = reason.meaning;
    }
    Json::Value& order = definitions["order"];
    order["transports"] = NamesInOrder<Transport, kTransportCount>();
    order["phases"] = NamesInOrder<Phase, kPhaseCount>();
    order["phaseParts"] = NamesInOrder<PhasePart, kPhasePartCount>();
    order["outcomes"] = NamesInOrder<Outcome, kOutcomeCount>();
    order["failureReasons"] = NamesInOrder<FailureReason, kFailureReasonCount>();
    return definitions;
  }
}
