// The opt-in TimeRestAnswers mode. Orthanc 1.10.1 compresses and sends the answer of
// POST /instances in HttpOutput::Answer, with no hook around it. The only way for a plugin to time
// that is to own the route: this registers /instances, forwards each request unchanged to Orthanc's
// built-in handler (OrthancPluginCallRestApi with the client's headers and body), and times the
// hand-back of the answer, which Orthanc compresses and writes to the socket synchronously.
// Trade-off, documented: instances then have the origin "Plugins" and no RemoteIP/HttpUsername
// metadata, error answers lose Orthanc's JSON details, and bodies over 4 GiB are refused.
#pragma once

#include <string>

namespace IngestPerf
{
  struct IngestPipeline;

  struct RestAnswerState
  {
    bool active = false;
    std::string reason;
  };

  RestAnswerState RegisterRestAnswerTiming(bool enabled, IngestPipeline& pipeline);
}
