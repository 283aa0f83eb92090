// Memory is bounded by configuration, never by the number of instances: the resident memory of
// the plugin's pipeline (default configuration) after 1,000 instances and after 1,000,000 more,
// through the same code path as the Orthanc callbacks, with labels within their limits. Prints
// the figures; exits 1 if the growth exceeds 1 MiB.
#include "Platform/MonotonicClock.h"
#include "Recording/IngestState.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  long ResidentKiB()
  {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
    {
      if (line.rfind("VmRSS:", 0) == 0)
      {
        return std::stol(line.substr(6));
      }
    }
    return -1;
  }

  // One instance through every hook, HTTP or C-STORE, with one of a fixed set of label values.
  void Ingest(IngestState& pipeline, uint64_t index)
  {
    static const std::vector<std::string> aets = {"CT01", "MR02", "US03", "XA04", "PACS"};
    static const std::vector<std::string> classes = {"1.2.840.10008.5.1.4.1.1.2", "1.2.840.10008.5.1.4.1.1.4",
                                                     "1.2.840.10008.5.1.4.1.1.7"};
    const bool dicom = (index % 2) == 0;
    const Transport transport = dicom ? Transport::Dicom : Transport::Rest;
    InstanceTimeline& timeline = pipeline.timelines.ForCurrentThread();
    if (!dicom)
    {
      timeline.HttpRequest(MonotonicNowNs(), true, true, Transport::Rest, pipeline.recorder, index % 3 == 0);
    }
    timeline.Received(MonotonicNowNs(), transport, 500000 + index % 1000, true, "1.2.840.10008.1.2.1",
                      pipeline.recorder);
    timeline.Filtered(MonotonicNowNs(), transport, pipeline.recorder);
    StoredEvent event{};
    event.nowNs = MonotonicNowNs();
    event.wallNowNs = WallNowNs();
    event.transport = transport;
    event.storedBytes = 500000 + index % 1000;
    event.instanceKey = index + 1;
    event.receptionSecond = event.wallNowNs / 1000000000 + 2;
    event.labels.remoteIp = "10.0.0.1";
    event.labels.storedSyntax = "1.2.840.10008.1.2.1";
    event.labels.sopClass = classes[index % classes.size()].c_str();
    if (dicom)
    {
      event.labels.remoteAet = aets[index % aets.size()].c_str();
      event.labels.calledAet = "ORTHANC";
      event.peerKey = 1 + index % aets.size();
    }
    timeline.Stored(event, pipeline.recorder);
    pipeline.recorder.NewInstanceChange(index + 1, MonotonicNowNs());
  }
}


int main()
{
  const long before = ResidentKiB();
  IngestState pipeline{Configuration()};
  const long constructed = ResidentKiB();

  uint64_t index = 0;
  for (; index < 1000; index++)
  {
    Ingest(pipeline, index);
  }
  const long after1k = ResidentKiB();
  const int64_t start = MonotonicNowNs();
  for (; index < 1001000; index++)
  {
    Ingest(pipeline, index);
  }
  const double seconds = static_cast<double>(MonotonicNowNs() - start) / 1e9;
  const long after1m = ResidentKiB();

  printf("resident memory of the pipeline, default configuration (KiB):\n");
  printf("  process before the pipeline      %8ld\n", before);
  printf("  pipeline constructed             %8ld  (+%ld)\n", constructed, constructed - before);
  printf("  after 1,000 instances            %8ld  (+%ld)\n", after1k, after1k - before);
  printf("  after 1,001,000 instances        %8ld  (+%ld)\n", after1m, after1m - before);
  printf("growth from 1,000 to 1,001,000 instances: %ld KiB (limit 1024)\n", after1m - after1k);
  printf("%.0f instances/s through the hot path (%.0f ns each, one thread)\n", 1e6 / seconds, seconds * 1e3);
  return (after1m - after1k) <= 1024 ? 0 : 1;
}
