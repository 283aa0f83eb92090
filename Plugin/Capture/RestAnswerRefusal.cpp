#include "Capture/RestAnswerRefusal.h"

#include "Platform/OrthancSdk.h"
#include "Recording/Unobservable.h"

namespace IngestPerf
{
  RestAnswerState RefuseRestAnswerTiming(bool requested)
  {
    RestAnswerState state;
    state.reason = kRestAnswerUnobservable;
    if (requested)
    {
      state.reason = std::string("IngestPerf.TimeRestAnswers is refused: ") + state.reason;
      OrthancSdk::LogWarning("IngestPerf: " + state.reason + "; responseSend stays unobservable");
    }
    return state;
  }
}
