// The REST answer of an ingest (POST /instances) is compressed and sent by Orthanc in
// HttpOutput::Answer, after every plugin hook. No Orthanc up to 1.12.7 gives plugins a hook around
// it, and the only way to time it, taking over /instances and forwarding each request through
// OrthancPluginCallRestApi, changes what Orthanc records and answers: the instances get the Origin
// "Plugins" and lose RemoteIP and HttpUsername, and error answers lose their details. This plugin
// changes nothing of an ingest, so IngestPerf.TimeRestAnswers is refused, with this reason in the
// log and in /perf/stats, and responseSend stays unobservable.
#pragma once

#include "Platform/PluginStatus.h"

#include <string>

namespace IngestPerf
{
  // What /perf/stats says of the REST answer's timing: never active, with the reason
  // (Recording/Unobservable's one text); logs the refusal when the configuration asks for
  // IngestPerf.TimeRestAnswers. Times nothing.
  RestAnswerState RefuseRestAnswerTiming(bool requested);
}
