// What the plugin knows about itself and its host, fixed at start-up: versions, configuration,
// and which hooks Orthanc accepted. Exported with every /perf/stats answer.
#pragma once

#include "Platform/Configuration.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace IngestPerf
{
  struct HookState
  {
    bool registered = false;
    std::string reason;  // why not, when not registered
    std::string cost;    // what not holding it costs the figures, when not registered and it matters
    std::string state;   // a hook decided after start-up: "left", "waiting", "held" or "refused"
  };

  // The ReceivedInstanceCallback, which Orthanc lets one plugin hold (a second registration fails,
  // and the site's own callback would be lost). The plugin takes it only when no other plugin may
  // need it (IngestPerf.ReceivedInstanceCallback, Host/LoadedPlugins), and only once every plugin has
  // loaded, from its own thread when Orthanc has started. Decided at start-up (Leave, Wait), then set
  // once by that thread (Held, Refused) while the routes read it: the state is one atomic.
  class ReceivedInstanceHook
  {
  public:
    enum class State : uint8_t
    {
      Left,     // left to the site's plugins
      Waiting,  // to be registered once Orthanc has started
      Held,
      Refused  // Orthanc refused it: another plugin holds it
    };

    ReceivedInstanceHook() = default;
    ReceivedInstanceHook(const ReceivedInstanceHook& other) :
      state_(other.state_.load()),
      leftBecause_(other.leftBecause_)
    {
    }
    ReceivedInstanceHook& operator=(const ReceivedInstanceHook& other)
    {
      state_.store(other.state_.load());
      leftBecause_ = other.leftBecause_;
      return *this;
    }

    // At start-up only.
    void Leave(const std::string& because)
    {
      leftBecause_ = because;
      state_.store(State::Left, std::memory_order_release);
    }
    void Wait() { state_.store(State::Waiting, std::memory_order_release); }
    // By the plugin's thread, once, from Waiting.
    void Set(State state) { state_.store(state, std::memory_order_release); }

    State Get() const { return state_.load(std::memory_order_acquire); }
    HookState View() const
    {
      HookState view;
      const State state = Get();
      view.registered = state == State::Held;
      switch (state)
      {
        case State::Left:
          view.state = "left";
          view.reason = "left to the site's plugins: " + leftBecause_;
          break;
        case State::Waiting:
          view.state = "waiting";
          view.reason = "to be registered once Orthanc has started, so that no plugin's own registration fails";
          break;
        case State::Refused:
          view.state = "refused";
          view.reason = "another plugin holds it: Orthanc lets one plugin hold it, and refused this plugin's "
                        "registration once every plugin had loaded";
          break;
        default:
          view.state = "held";
          break;
      }
      view.cost = view.registered ? "" : kCost;
      return view;
    }

    static constexpr const char* kCost =
      "preStore is not measured; receive (HTTP) and associationGap (C-STORE) end at this plugin's instance filter "
      "instead, so they also hold Orthanc's parsing, ingest transcoding and summary of the instance (preStore: "
      "0.2-0.4 ms for a 0.5 MB CT slice here) and the ReceivedInstanceCallback of the plugin that holds it; an "
      "instance that ends before the instance filters (not DICOM, unreadable, refused by Lua) is not seen over "
      "C-STORE, and counted requestWithoutInstance over HTTP";

  private:
    std::atomic<State> state_{State::Left};
    std::string leftBecause_ = "the plugin is not running";
  };

  // The plugin's second instance filter and second OnStoredInstance callback, registered last in
  // Orthanc's chains so that what lies between its two callbacks is the other plugins' (otherFilters,
  // otherOnStored). Orthanc calls the plugins' callbacks in the order they registered, and the plugins
  // loaded after this one registered theirs after its first ones. Each second callback is registered
  // from inside the first one, at the first instance, under the mutex Orthanc holds while it walks
  // that chain (Capture/IngestHooks), and only when a plugin is loaded after this one. The plugin
  // lists are set at start-up; the two states by the storing thread that registers, read by the routes.
  class LaterPluginsHooks
  {
  public:
    enum class State : uint8_t
    {
      None,        // no plugin is loaded after this one: nothing runs between the two callbacks
      Waiting,     // to be registered at the first instance
      Registered,  // called last in Orthanc's chain
      Refused      // Orthanc refused the registration
    };

    LaterPluginsHooks() = default;
    LaterPluginsHooks(const LaterPluginsHooks& other) { *this = other; }
    LaterPluginsHooks& operator=(const LaterPluginsHooks& other)
    {
      loadedBefore = other.loadedBefore;
      loadedAfter = other.loadedAfter;
      filter_.store(other.filter_.load());
      stored_.store(other.stored_.load());
      return *this;
    }

    State Filter() const { return filter_.load(std::memory_order_acquire); }
    State Stored() const { return stored_.load(std::memory_order_acquire); }
    void SetFilter(State state) { filter_.store(state, std::memory_order_release); }
    void SetStored(State state) { stored_.store(state, std::memory_order_release); }

    static const char* Name(State state)
    {
      switch (state)
      {
        case State::Waiting:
          return "waiting";
        case State::Registered:
          return "registered";
        case State::Refused:
          return "refused";
        default:
          return "none";
      }
    }

    // The file names of the other plugins Orthanc loaded before this one (their callbacks run before
    // this plugin's: inside receive, preStore, associationGap and persist, not told apart) and after it
    // (timed apart once the second callbacks are registered).
    std::vector<std::string> loadedBefore;
    std::vector<std::string> loadedAfter;

  private:
    std::atomic<State> filter_{State::None};
    std::atomic<State> stored_{State::None};
  };

  struct HookRegistrations
  {
    HookState httpRequestFilter;
    ReceivedInstanceHook receivedInstance;
    HookState transcoder;
    HookState instanceFilter;
    // Never registered (its reason says why): Orthanc stops at the first C-STORE filter that accepts.
    HookState cstoreFilter;
    HookState storedInstance;
    HookState change;
  };

  struct StorageAreaState
  {
    bool requested = false;
    bool active = false;
    bool heldByAnotherPlugin = false;  // another plugin owns Orthanc's storage area
    std::string reason;                // why not active, when requested
    std::string root;
  };

  // Whether DCMTK disables Nagle's algorithm on Orthanc's DICOM associations (TCP_NODELAY), as
  // Orthanc's environment says at start-up (Host/DicomTcpNoDelay.h).
  struct DicomTcpNoDelayStatus
  {
    bool inEffect = false;  // DCMTK will set TCP_NODELAY on the associations Orthanc accepts and opens
    std::string source;     // "environment" (the operator's TCP_NODELAY), or "" when not in effect
    std::string detail;
  };

  // What the plugin does, first in every answer: times ingest, was told not to (IngestPerf.Enable
  // false), or could not start (a wrong option, memory it could not reserve...) and stays loaded,
  // registering no hook, so that Orthanc runs on and /perf says why.
  enum class PluginState
  {
    Running,
    Disabled,
    Inert
  };

  inline const char* PluginStateName(PluginState state)
  {
    switch (state)
    {
      case PluginState::Disabled:
        return "disabled";
      case PluginState::Inert:
        return "inert";
      default:
        return "running";
    }
  }

  struct PluginStatus
  {
    std::string pluginVersion;
    std::string orthancVersion;
    int64_t startWallNs = 0;
    Configuration configuration;
    PluginState state = PluginState::Running;
    std::string stateReason;  // why it is disabled or inert; "" when running
    bool Running() const { return state == PluginState::Running; }
    HookRegistrations hooks;
    LaterPluginsHooks laterPlugins;
    StorageAreaState storage;
    DicomTcpNoDelayStatus dicomTcpNoDelay;
  };
}
