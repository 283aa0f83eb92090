#include "Capture/RestAnswerTiming.h"

#include "Host/OrthancSdk.h"

namespace IngestPerf
{
  const char* RestAnswerUnobservableReason()
  {
    return "Orthanc compresses and sends the REST answer in HttpOutput::Answer, after every plugin hook, and no "
           "Orthanc up to 1.12.7 offers a hook around it; taking over POST /instances to time it would change the "
           "instances' Origin, RemoteIP and HttpUsername and Orthanc's error details";
  }


  RestAnswerState RestAnswerTimingState(bool requested)
  {
    RestAnswerState state;
    state.reason = RestAnswerUnobservableReason();
    if (requested)
    {
      state.reason = std::string("IngestPerf.TimeRestAnswers is refused: ") + state.reason;
      OrthancSdk::LogWarning("IngestPerf: " + state.reason + "; responseSend stays unobservable");
    }
    return state;
  }
}
