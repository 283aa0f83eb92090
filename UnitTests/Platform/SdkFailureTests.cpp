// The hooks and the REST guard against an Orthanc whose SDK calls fail: a fake context answers
// the registrations, captures the callbacks, and fails every instance accessor the way the SDK
// reports a failure (null, -1, Unknown origin).
#include "Capture/IngestHooks.h"
#include "Platform/OrthancSdk.h"
#include "Recording/IngestState.h"

#include <gtest/gtest.h>

#include <json/reader.h>

#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace IngestPerf;

namespace
{
  struct FakeOrthanc
  {
    OrthancPluginOnStoredInstanceCallback onStored = nullptr;
    // Orthanc's chains, in registration order.
    std::vector<OrthancPluginOnStoredInstanceCallback> storedChain;
    std::vector<OrthancPluginIncomingDicomInstanceFilter> filterChain;
    uint16_t sentStatus = 0;
    std::string sentBody;
    std::string contentType;
  };

  FakeOrthanc* fake = nullptr;

  OrthancPluginErrorCode FailingInvokeService(OrthancPluginContext*, _OrthancPluginService service, const void* params)
  {
    switch (service)
    {
      case _OrthancPluginService_RegisterOnStoredInstanceCallback:
        fake->onStored = static_cast<const _OrthancPluginOnStoredInstanceCallback*>(params)->callback;
        fake->storedChain.push_back(fake->onStored);
        return OrthancPluginErrorCode_Success;
      case _OrthancPluginService_RegisterIncomingDicomInstanceFilter:
        fake->filterChain.push_back(static_cast<const _OrthancPluginIncomingDicomInstanceFilter*>(params)->callback);
        return OrthancPluginErrorCode_Success;
      case _OrthancPluginService_SetHttpHeader:
        fake->contentType = static_cast<const _OrthancPluginSetHttpHeader*>(params)->value;
        return OrthancPluginErrorCode_Success;
      case _OrthancPluginService_SendHttpStatus:
      {
        const auto* status = static_cast<const _OrthancPluginSendHttpStatus*>(params);
        fake->sentStatus = status->status;
        fake->sentBody.assign(status->body, status->bodySize);
        return OrthancPluginErrorCode_Success;
      }
      case _OrthancPluginService_GetInstanceOrigin:
      case _OrthancPluginService_GetInstanceSize:
      case _OrthancPluginService_GetInstanceMetadata:
      case _OrthancPluginService_GetInstanceRemoteAet:
        return OrthancPluginErrorCode_InternalError;  // the accessors all fail
      default:
        return OrthancPluginErrorCode_Success;  // the other registrations
    }
  }

  class SdkFailure : public ::testing::Test
  {
  protected:
    void SetUp() override
    {
      fake = &state;
      context.orthancVersion = "1.10.1";
      context.InvokeService = FailingInvokeService;
      OrthancSdk::SetContext(&context);
    }

    void TearDown() override
    {
      SetActiveIngestState(nullptr);
      OrthancSdk::SetContext(nullptr);
      fake = nullptr;
    }

    FakeOrthanc state;
    OrthancPluginContext context{};
  };
}


TEST_F(SdkFailure, StoredInstanceIsCountedWithUnknownLabelsAndNoBogusSize)
{
  Configuration configuration;
  IngestState pipeline(configuration);
  SetActiveIngestState(&pipeline);
  LaterPluginsHooks later;  // no plugin loaded after this one: one callback per chain
  RegisterIngestHooks(configuration, later);
  ASSERT_NE(state.onStored, nullptr);

  // No earlier hook on this thread: OnStored asks the SDK for the origin, the size, the stored
  // syntax, the SOP class and the reception date, and every call fails.
  EXPECT_EQ(state.onStored(nullptr, "0a1b2c3d-4e5f6a7b-8c9d0e1f-2a3b4c5d-6e7f8a9b"), OrthancPluginErrorCode_Success);

  pipeline.recorder.Drain();
  const StatsSnapshot snapshot = pipeline.stats.Snapshot(0);
  EXPECT_EQ(snapshot.callbackErrors, 0u);
  EXPECT_EQ(snapshot.sdkCallsFailed, 5u);  // origin, size, TransferSyntax, SopClassUid, ReceptionDate
  const TransportSnapshot& plugin = snapshot.transports[static_cast<size_t>(Transport::Plugin)];
  EXPECT_EQ(plugin.outcomes[static_cast<size_t>(Outcome::Stored)], 1u);
  // The SDK's -1 was once read as an unsigned size: 18446744073709551615 bytes stored.
  EXPECT_EQ(plugin.storedBytes.Count(), 1u);
  EXPECT_EQ(plugin.storedBytes.Max(), 0);

  LabelId id = 0;
  EXPECT_TRUE(pipeline.labels.Find(LabelDimension::StoredSyntax, kUnknownLabel, id));
  EXPECT_TRUE(pipeline.labels.Find(LabelDimension::SopClass, kUnknownLabel, id));
}


TEST_F(SdkFailure, RestGuardAnswersWithoutLettingAnythingEscape)
{
  // Out of memory: 503 with a constant JSON body.
  const uint64_t before = OrthancSdk::FailedAnswers();
  OrthancSdk::GuardRest(nullptr, [] { throw std::bad_alloc(); });
  EXPECT_EQ(state.sentStatus, 503);
  EXPECT_EQ(state.contentType, "application/json");
  Json::Value body;
  Json::CharReaderBuilder builder;
  std::unique_ptr<Json::CharReader> reader(builder.newCharReader());
  std::string errors;
  ASSERT_TRUE(reader->parse(state.sentBody.data(), state.sentBody.data() + state.sentBody.size(), &body, &errors))
    << state.sentBody;
  EXPECT_NE(body["error"].asString().find("out of memory"), std::string::npos);

  // Any other exception: 500 with the reason.
  OrthancSdk::GuardRest(nullptr, [] { throw std::runtime_error("broken"); });
  EXPECT_EQ(state.sentStatus, 500);
  EXPECT_NE(state.sentBody.find("broken"), std::string::npos);
  EXPECT_EQ(OrthancSdk::FailedAnswers(), before + 2);
}


namespace
{
  // Orthanc walking its chain as OnStored and the instance filters do: a callback registered while
  // the chain is walked is called in the same walk (std::list iteration reaches the appended node).
  template <typename Call, typename Callback>
  void WalkChain(std::vector<Callback>& chain, Call call)
  {
    for (size_t i = 0; i < chain.size(); i++)
    {
      call(chain[i]);
    }
  }

  // orthanc-python loaded after this plugin: both second callbacks wait for the first instance.
  LaterPluginsHooks PythonLoadedAfter()
  {
    LaterPluginsHooks later;
    later.loadedAfter = {"libOrthancPython.so"};
    later.SetFilter(LaterPluginsHooks::State::Waiting);
    later.SetStored(LaterPluginsHooks::State::Waiting);
    return later;
  }
}


TEST_F(SdkFailure, SecondCallbacksAreRegisteredInsideTheFirstAndTimeThePluginsBetween)
{
  Configuration configuration;
  IngestState pipeline(configuration);
  SetActiveIngestState(&pipeline);
  LaterPluginsHooks later = PythonLoadedAfter();
  RegisterIngestHooks(configuration, later);
  ASSERT_EQ(state.filterChain.size(), 1u);
  ASSERT_EQ(state.storedChain.size(), 1u);

  const char* const id = "0a1b2c3d-4e5f6a7b-8c9d0e1f-2a3b4c5d-6e7f8a9b";
  // A plugin loaded after this one: its callbacks come between this plugin's first and second ones.
  const auto slowPlugin = [] { std::this_thread::sleep_for(std::chrono::milliseconds(3)); };
  for (int instance = 0; instance < 2; instance++)
  {
    size_t filterCalls = 0;
    WalkChain(state.filterChain, [&](OrthancPluginIncomingDicomInstanceFilter filter) {
      EXPECT_EQ(filter(nullptr), 1);
      filterCalls++;
      if (filterCalls == 1)
      {
        slowPlugin();
      }
    });
    EXPECT_EQ(filterCalls, 2u);  // the second filter was registered by the first, once, and called last
    size_t storedCalls = 0;
    WalkChain(state.storedChain, [&](OrthancPluginOnStoredInstanceCallback stored) {
      EXPECT_EQ(stored(nullptr, id), OrthancPluginErrorCode_Success);
      storedCalls++;
      if (storedCalls == 1)
      {
        slowPlugin();
      }
    });
    EXPECT_EQ(storedCalls, 2u);
  }
  EXPECT_EQ(later.Filter(), LaterPluginsHooks::State::Registered);
  EXPECT_EQ(later.Stored(), LaterPluginsHooks::State::Registered);

  pipeline.recorder.Drain();
  const StatsSnapshot snapshot = pipeline.stats.Snapshot(0);
  EXPECT_EQ(snapshot.callbackErrors, 0u);
  const TransportSnapshot& plugin = snapshot.transports[static_cast<size_t>(Transport::Plugin)];
  // Two instances, each counted once (no reception date to call the second a duplicate).
  EXPECT_EQ(plugin.outcomes[static_cast<size_t>(Outcome::Stored)], 2u);
  for (const Phase phase : {Phase::OtherFilters, Phase::OtherOnStored})
  {
    const HistogramSnapshot& figures = plugin.phases[static_cast<size_t>(phase)];
    EXPECT_EQ(figures.Count(), 2u) << DefinitionOf(phase).name;
    EXPECT_GE(figures.Max(), 3000000) << DefinitionOf(phase).name;  // the other plugin's 3 ms, and no more
    EXPECT_LT(figures.Max(), 3000000000) << DefinitionOf(phase).name;
  }
  // persist is what lies between: not the other plugins' time.
  EXPECT_LT(plugin.phases[static_cast<size_t>(Phase::Persist)].Max(), 3000000);
}


TEST_F(SdkFailure, AnInstanceRefusedByALaterPluginsFilterIsRejected)
{
  Configuration configuration;
  IngestState pipeline(configuration);
  SetActiveIngestState(&pipeline);
  LaterPluginsHooks later = PythonLoadedAfter();
  RegisterIngestHooks(configuration, later);
  ASSERT_EQ(state.filterChain.size(), 1u);
  EXPECT_EQ(state.filterChain[0](nullptr), 1);  // the later plugin answers 0: Orthanc's loop stops there
  ASSERT_EQ(state.filterChain.size(), 2u);
  // The thread's next instance ends the record.
  EXPECT_EQ(state.filterChain[0](nullptr), 1);
  EXPECT_EQ(state.filterChain[1](nullptr), 1);
  pipeline.recorder.Drain();
  const StatsSnapshot snapshot = pipeline.stats.Snapshot(0);
  const TransportSnapshot& plugin = snapshot.transports[static_cast<size_t>(Transport::Plugin)];
  EXPECT_EQ(plugin.outcomes[static_cast<size_t>(Outcome::Rejected)], 1u);
  EXPECT_EQ(plugin.outcomes[static_cast<size_t>(Outcome::Failed)], 0u);
}
