// Entry point: reads the configuration, builds the ingest state, registers hooks and routes.
// Data flow (docs/development.md, Module map): IngestHooks -> InstanceTimeline (per thread) ->
//            IngestRecorder (Measure: an InstanceMeasurement, once) -> IngestStats, TimeWindows,
//            RecentInstances, AssociationTracker -> IngestState::Collect(query) -> IngestReport ->
//            DiagnosisInput -> Diagnose -> JsonExporter / PrometheusExporter / DiagnosisExporter /
//            SlowestExporter / TraceExporter -> RestRoutes (and the page of /perf/ui/, Ui/UiFiles,
//            which reads the routes over HTTP).
#include "Capture/IngestHooks.h"
#include "Capture/StorageRoot.h"
#include "Capture/TimedStorageArea.h"
#include "Correlation/IngestWatcher.h"
#include "Export/PrometheusExporter.h"
#include "Host/DicomTcpNoDelay.h"
#include "Host/LoadedCopy.h"
#include "Host/LoadedPlugins.h"
#include "Host/OrthancMetrics.h"
#include "Platform/Configuration.h"
#include "Platform/FaultInjection.h"
#include "Platform/MappedText.h"
#include "Platform/MonotonicClock.h"
#include "Platform/OrthancSdk.h"
#include "Platform/PluginStatus.h"
#include "Recording/IngestState.h"
#include "Rest/RestRoutes.h"
#include "Ui/UiFiles.h"

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#ifndef INGEST_PERF_VERSION
#define INGEST_PERF_VERSION "0.0.0"
#endif

namespace
{
  using namespace IngestPerf;

  // What the exception being handled says, whatever its type.
  std::string CurrentExceptionText()
  {
    try
    {
      throw;
    }
    catch (const std::exception& e)
    {
      return e.what();
    }
    catch (...)
    {
      return "an exception that is not a std::exception";
    }
  }

  // Live until the library is unloaded: Orthanc may still run a callback while finalizing.
  std::unique_ptr<IngestState> ingestState;
  std::unique_ptr<IngestWatcher> watcher;
  PluginStatus status;
}


namespace
{
  void MarkHooksNotRegistered(const std::string& reason)
  {
    for (HookState* hook : {&status.hooks.httpRequestFilter, &status.hooks.transcoder, &status.hooks.instanceFilter,
                            &status.hooks.storedInstance, &status.hooks.change})
    {
      hook->registered = false;
      hook->reason = reason;
    }
    status.hooks.receivedInstance.Leave(reason);
  }

  // Loaded, answering /perf, timing nothing: the rule for every start-up failure.
  void StayInert(const std::string& reason)
  {
    status.state = PluginState::Inert;
    status.stateReason = reason;
    MarkHooksNotRegistered(reason);
    OrthancSdk::LogError("IngestPerf: " + reason +
                         "; the plugin stays loaded but inert (no hook registered; GET /perf/stats says why), "
                         "Orthanc runs without it");
  }

  // The IngestPerf section: a wrong type or value makes the plugin inert; an unknown key is said.
  void ReadConfiguration()
  {
#ifdef INGEST_PERF_FAULT_INJECTION
    {
      FaultInjection::Settings faults;
      std::string error;
      if (!FaultInjection::Parse(faults, error, getenv("INGEST_PERF_FAULTS")))
      {
        StayInert(error);
        return;
      }
      FaultInjection::Configure(faults);
      OrthancSdk::LogWarning("IngestPerf: TEST BUILD WITH INJECTED FAULTS (INGEST_PERF_FAULTS=\"" +
                             std::string(getenv("INGEST_PERF_FAULTS") ? getenv("INGEST_PERF_FAULTS") : "") +
                             "\"): SDK calls and allocations fail at random; never use it in production");
    }
#endif
    try
    {
      status.orthancVersion = OrthancSdk::RunningOrthancVersion();
      status.configuration =
        ParseConfiguration(OrthancSdk::ReadConfiguration(), OrthancVersion::Parse(status.orthancVersion));
      PrometheusLabelsOf(status.configuration);  // the label names, which Platform/ does not know
    }
    catch (const ConfigurationError& e)
    {
      StayInert(std::string("invalid configuration: ") + e.what());
      return;
    }
    catch (...)
    {
      StayInert("cannot read the configuration: " + CurrentExceptionText());
      return;
    }
    for (const RemovedOption& removed : status.configuration.removedOptions)
    {
      OrthancSdk::LogWarning(std::string("IngestPerf: ") + removed.Message() + " (in the " + kConfigurationSection +
                             " section)");
    }
    for (const UnknownOption& unknown : status.configuration.unknownOptions)
    {
      OrthancSdk::LogWarning(std::string("IngestPerf: ") + unknown.Message() + " (in the " + kConfigurationSection +
                             " section; ignored)");
    }
  }

  // Which plugin holds the ReceivedInstanceCallback, and what it costs the figures when not this one.
  void LogReceivedInstanceHook()
  {
    const HookState hook = status.hooks.receivedInstance.View();
    switch (status.hooks.receivedInstance.Get())
    {
      case ReceivedInstanceHook::State::Held:
        OrthancSdk::LogWarning("IngestPerf: holds the ReceivedInstanceCallback, taken once every plugin had loaded");
        break;
      case ReceivedInstanceHook::State::Waiting:
        OrthancSdk::LogWarning("IngestPerf: the ReceivedInstanceCallback will be taken once Orthanc has started "
                               "(IngestPerf.ReceivedInstanceCallback), if no other plugin holds it");
        break;
      default:
        OrthancSdk::LogWarning("IngestPerf: ReceivedInstanceCallback " + hook.reason + ". " + hook.cost);
        break;
    }
  }

  // The folder Orthanc resolves the configuration's relative paths against.
  std::string OrthancConfigurationFolder()
  {
    return ConfigurationFolder(OrthancSdk::ConfigurationArgument(), std::filesystem::current_path().string(),
                               [](const std::string& path) { return std::filesystem::is_directory(path); });
  }

  // "a, b, c": file or hook names for the log.
  std::string Joined(const std::vector<std::string>& names)
  {
    std::string text;
    for (const std::string& name : names)
    {
      text += (text.empty() ? "" : ", ") + name;
    }
    return text;
  }

  // Which plugins run their callbacks before this plugin's and which after; the second callbacks wait
  // for the first instance where some plugin is loaded after this one.
  void DecideLaterPluginsHooks(LaterPluginsHooks& later, const std::vector<std::string>& files)
  {
    SplitByLoadOrder(files, later.loadedBefore, later.loadedAfter, nullptr, LoadedCopy::Path());
    const LaterPluginsHooks::State state =
      later.loadedAfter.empty() ? LaterPluginsHooks::State::None : LaterPluginsHooks::State::Waiting;
    later.SetFilter(state);
    later.SetStored(state);
    if (!later.loadedBefore.empty())
    {
      OrthancSdk::LogWarning("IngestPerf: " + Joined(later.loadedBefore) +
                             " loaded before this plugin: their instance filters and OnStoredInstance callbacks "
                             "run before this plugin's, inside preStore and persist, not timed apart; list this "
                             "plugin first in \"Plugins\" to time them (otherFilters, otherOnStored)");
    }
  }

  // Whether to take the ReceivedInstanceCallback once Orthanc has started: not where a plugin Orthanc
  // loads may need it, unless asked to.
  void DecideReceivedInstanceHook(ReceivedInstanceHook& hook, const std::vector<std::string>& files)
  {
    switch (status.configuration.receivedInstanceCallback)
    {
      case ReceivedInstanceMode::Leave:
        hook.Leave("IngestPerf.ReceivedInstanceCallback is false");
        return;
      case ReceivedInstanceMode::Take:
        hook.Wait();
        return;
      case ReceivedInstanceMode::Auto:
        break;
    }
    const std::vector<std::string> others = PluginsThatMayTakeTheReceivedInstanceCallback(files, LoadedCopy::Path());
    if (others.empty())
    {
      hook.Wait();
      return;
    }
    hook.Leave("Orthanc also loads " + Joined(others) +
               ", which may need it (Orthanc lets only one plugin hold it); set IngestPerf.ReceivedInstanceCallback "
               "to true where none of them does");
  }

  void Start()
  {
    ingestState.reset(new IngestState(status.configuration));
    if (status.configuration.duplicatesBeforeFilters)
    {
      // A record that ended at ReceivedInstance: a duplicate if the index holds its instance (asked
      // by the plugin's thread), set before any hook may end a record.
      ingestState->recorder.SetInstanceExists([](const char* uid) { return OrthancSdk::InstanceExists(uid); });
    }
    SetActiveIngestState(ingestState.get());
    // The site's plugins and scripts, read once: the files Orthanc loads ("Plugins") and the hooks
    // its Lua and Python scripts use.
    const std::string folder = OrthancConfigurationFolder();
    const std::vector<std::string> pluginFiles = LoadedPluginFiles(status.configuration.plugins, folder);
    status.configuration.luaCallbacks = LuaCallbacksDefined(status.configuration.luaScriptPaths, folder);
    status.configuration.pythonCallbacks = PythonCallbacksRegistered(status.configuration.pythonScript, folder);
    DecideLaterPluginsHooks(status.laterPlugins, pluginFiles);
    status.hooks = RegisterIngestHooks(status.configuration, status.laterPlugins);
    DecideReceivedInstanceHook(status.hooks.receivedInstance, pluginFiles);
    status.storage = RegisterTimedStorageArea(status.configuration);
    RegisterPublishedOrthancMetrics(status);
    IngestState* ingest = ingestState.get();
    IngestWatcher::Hooks hooks;
    hooks.activity = [ingest] { return ingest->timelines.RecordsOpened(); };
    hooks.socketsRead = [ingest](const std::vector<SocketInfo>& sockets, int64_t nowNs) {
      ingest->SocketsRead(sockets, nowNs);
    };
    hooks.tick = [ingest](int64_t nowNs) { ingest->Tick(nowNs); };
    hooks.drain = [ingest] { ingest->recorder.Drain(); };
    ingest->recorder.SetDrainWanted([] {
      if (IngestWatcher* active = ActiveIngestWatcher())
      {
        active->RequestDrain();
      }
    });
    hooks.orthancStarted = [] {
      RegisterLateHooks(status.hooks.receivedInstance);
      LogReceivedInstanceHook();
    };
    hooks.checkConnections = [ingest](int64_t nowNs) { return ingest->CheckConnections(nowNs); };
    watcher.reset(new IngestWatcher(static_cast<uint16_t>(status.configuration.dicomPort),
                                    static_cast<uint16_t>(status.configuration.httpPort), std::move(hooks)));
    ingest->readingWanted = [](int64_t nowNs) {
      if (IngestWatcher* active = ActiveIngestWatcher())
      {
        active->RequestReading(nowNs);
      }
    };
    ingest->checkedSince = [](int64_t ns) {
      IngestWatcher* active = ActiveIngestWatcher();
      return active == nullptr || active->CheckedSince(ns);
    };
    watcher->Start();
    SetActiveIngestWatcher(watcher.get());
    if (status.storage.requested && !status.storage.active)
    {
      OrthancSdk::LogWarning("IngestPerf: timed storage not started: " + status.storage.reason);
    }
    LogReceivedInstanceHook();
    OrthancSdk::LogWarning(std::string("IngestPerf: no C-STORE filter: ") + kCStoreFilterReason);
    OrthancSdk::LogWarning(std::string("IngestPerf ") + INGEST_PERF_VERSION + " is timing ingest; see GET /perf/stats");
  }
}


namespace
{
  // Whatever goes wrong, OrthancPluginInitialize answers 0: a plugin that fails to initialize stops
  // Orthanc (and Debian's service restarts it into the same failure). It stays inert instead.
  void Initialize(OrthancPluginContext* context)
  {
    OrthancSdk::SetContext(context);
    // The name Orthanc registered this copy under: once claimed, PluginName() names a later copy.
    const char* const name = LoadedCopy::PluginName();
    OrthancSdk::SetLogName(name);
    if (!LoadedCopy::Claim())
    {
      OrthancSdk::LogWarning("IngestPerf: a second copy of this plugin was loaded from " + LoadedCopy::Path() +
                             " (registered as \"" + LoadedCopy::PluginName() +
                             "\"); it stays inert. Load the plugin once: either from Orthanc's plugin folder "
                             "or by an explicit entry in \"Plugins\", not both");
      return;
    }
    status.pluginVersion = INGEST_PERF_VERSION;
    status.orthancVersion = context->orthancVersion != nullptr ? context->orthancVersion : "";
    status.startWallNs = WallNowNs();
    if (!OrthancSdk::CheckVersion())
    {
      StayInert(std::string("this plugin needs Orthanc 1.10.1 or newer, running ") + status.orthancVersion);
    }
    else
    {
      ReadConfiguration();
    }

    if (status.Running())
    {
      try
      {
        // Read, never written: the environment is Orthanc's, and TCP_NODELAY the operator's remedy.
        status.dicomTcpNoDelay = ReadDicomTcpNoDelay();
        if (status.dicomTcpNoDelay.inEffect)
        {
          OrthancSdk::LogWarning("IngestPerf: DICOM TCP_NODELAY in effect: " + status.dicomTcpNoDelay.detail);
        }
        if (status.configuration.enable)
        {
          Start();
        }
        else
        {
          status.state = PluginState::Disabled;
          status.stateReason = "IngestPerf.Enable is false";
          MarkHooksNotRegistered(status.stateReason);
          OrthancSdk::LogWarning("IngestPerf: disabled by IngestPerf.Enable = false; no hook is registered");
        }
      }
      catch (...)
      {
        const std::string what = CurrentExceptionText();
        if (!ingestState)
        {
          // Nothing is registered without the ingest state: Orthanc goes on alone, /perf/stats says why.
          StayInert("the plugin could not start: " + what);
        }
        else
        {
          // The hooks registered so far find the ingest state in place and keep working.
          OrthancSdk::LogError("IngestPerf: start-up stopped half-way, some hooks may be missing: " + what);
        }
      }
    }

    try
    {
      OrthancSdk::SetDescription(
        name, "Times every phase of DICOM ingest: the breakdown at /perf/stats, a page at /perf/ui/.");
      RegisterRestRoutes(status);
      OrthancSdk::SetRootUri(name, kUiPage);
      OrthancSdk::ExtendOrthancExplorer(name, OrthancExplorerLinkScript());
    }
    catch (...)
    {
      OrthancSdk::LogError("IngestPerf: cannot register /perf routes: " + CurrentExceptionText());
    }
  }
}


extern "C"
{
  ORTHANC_PLUGINS_API int32_t OrthancPluginInitialize(OrthancPluginContext* context)
  {
    try
    {
      Initialize(context);
    }
    catch (...)
    {
      try
      {
        OrthancSdk::LogError("IngestPerf: start-up failed (" + CurrentExceptionText() + "); Orthanc runs on");
      }
      catch (...)
      {
      }
    }
    return 0;
  }


  ORTHANC_PLUGINS_API void OrthancPluginFinalize()
  {
    // Called for every registration, duplicates included, once Orthanc serves nothing any more.
    try
    {
      if (watcher)
      {
        SetActiveIngestWatcher(nullptr);
        watcher->Stop();
      }
      MappedText::ReleaseSpare();
      LoadedCopy::Release();
    }
    catch (...)
    {
    }
  }


  ORTHANC_PLUGINS_API const char* OrthancPluginGetName()
  {
    try
    {
      return LoadedCopy::PluginName();
    }
    catch (...)
    {
      return "ingest-perf";
    }
  }


  ORTHANC_PLUGINS_API const char* OrthancPluginGetVersion()
  {
    return INGEST_PERF_VERSION;
  }
}
