#include "Recording/Unobservable.h"

#include <gtest/gtest.h>

#include <string>

using namespace IngestPerf;

namespace
{
  PluginStatus AllHooks()
  {
    PluginStatus status;
    for (HookState* hook : {&status.hooks.httpRequestFilter, &status.hooks.transcoder, &status.hooks.instanceFilter,
                            &status.hooks.storedInstance, &status.hooks.change})
    {
      hook->registered = true;
    }
    status.hooks.receivedInstance.Set(ReceivedInstanceHook::State::Held);
    return status;
  }

  bool Contains(const char* text, const char* part)
  {
    return text != nullptr && std::string(text).find(part) != std::string::npos;
  }
}


TEST(Unobservable, InherentReasonsComeBeforeMissingHooks)
{
  PluginStatus status = AllHooks();
  const Transport dicom = Transport::Dicom;
  const Transport rest = Transport::Rest;
  EXPECT_TRUE(Contains(PhaseUnobservableReason(status, &dicom, Phase::Receive), "DCMTK"));
  EXPECT_EQ(nullptr, PhaseUnobservableReason(status, &rest, Phase::Receive));
  EXPECT_TRUE(Contains(PhaseUnobservableReason(status, &rest, Phase::AssociationGap), "C-STORE"));
  // Merged over transports ("all"): only what this run lacks.
  EXPECT_EQ(nullptr, PhaseUnobservableReason(status, nullptr, Phase::Receive));

  // Left to other plugins: preStore is not measured; receive and associationGap end at the filter.
  status.hooks.receivedInstance.Leave("IngestPerf.ReceivedInstanceCallback is false");
  EXPECT_TRUE(Contains(PhaseUnobservableReason(status, &rest, Phase::PreStore), "ReceivedInstanceCallback"));
  EXPECT_EQ(nullptr, PhaseUnobservableReason(status, &rest, Phase::Receive));
  EXPECT_EQ(nullptr, PhaseUnobservableReason(status, &dicom, Phase::AssociationGap));
  EXPECT_TRUE(Contains(PhaseUnobservableReason(status, &dicom, Phase::Receive), "DCMTK"));
}


TEST(Unobservable, OptionalPhasesNameWhatTheyNeed)
{
  PluginStatus status = AllHooks();
  const Transport rest = Transport::Rest;
  EXPECT_TRUE(Contains(PhaseUnobservableReason(status, &rest, Phase::StorageWrite), "TimedStorage"));
  status.storage.active = true;
  EXPECT_EQ(nullptr, PhaseUnobservableReason(status, &rest, Phase::StorageWrite));
  EXPECT_EQ(nullptr, PhaseUnobservableReason(status, &rest, Phase::Transcode));
  status.hooks.transcoder.registered = false;
  EXPECT_TRUE(Contains(PhaseUnobservableReason(status, &rest, Phase::Transcode), "TranscodeTiming"));
  EXPECT_TRUE(Contains(PhaseUnobservableReason(status, &rest, Phase::OtherOnStored), "no other plugin is loaded"));
  status.laterPlugins.loadedAfter = {"libOrthancPython.so"};
  status.laterPlugins.SetStored(LaterPluginsHooks::State::Registered);
  EXPECT_EQ(nullptr, PhaseUnobservableReason(status, &rest, Phase::OtherOnStored));
}


TEST(Unobservable, StepsOutsideEveryPhaseDependOnTheStorageArea)
{
  PluginStatus status = AllHooks();
  size_t withoutStorage = UnobservableSteps(status).size();
  status.storage.active = true;
  const auto steps = UnobservableSteps(status);
  EXPECT_EQ(withoutStorage - 1, steps.size());
  for (const UnobservableStep& step : steps)
  {
    EXPECT_NE(std::string("storageWriteVsIndexUpdate"), step.what);
    EXPECT_NE(nullptr, step.reason);
  }
  EXPECT_STREQ(kRestAnswerUnobservable, steps[0].reason);
}
