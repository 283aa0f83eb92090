/* The ingest hooks orthanc-ingest-perf registers, each returning at once, for the benchmarks only:
 * what Orthanc itself spends loading a plugin and calling these hooks, before the plugin does any
 * work (the soak's side H, docs/measurements/soak.md). The ReceivedInstanceCallback keeps every
 * instance as is, the filters accept everything, OnStored and OnChange succeed. */
#include <orthanc/OrthancCPlugin.h>

static OrthancPluginReceivedInstanceAction Received(OrthancPluginMemoryBuffer64* modified, const void* buffer,
                                                    uint64_t size, OrthancPluginInstanceOrigin origin)
{
  (void) modified;
  (void) buffer;
  (void) size;
  (void) origin;
  return OrthancPluginReceivedInstanceAction_KeepAsIs;
}

static int32_t Filter(const OrthancPluginDicomInstance* instance)
{
  (void) instance;
  return 1;
}

static OrthancPluginErrorCode Stored(const OrthancPluginDicomInstance* instance, const char* instanceId)
{
  (void) instance;
  (void) instanceId;
  return OrthancPluginErrorCode_Success;
}

static OrthancPluginErrorCode Change(OrthancPluginChangeType changeType, OrthancPluginResourceType resourceType,
                                     const char* resourceId)
{
  (void) changeType;
  (void) resourceType;
  (void) resourceId;
  return OrthancPluginErrorCode_Success;
}

static int32_t HttpFilter(OrthancPluginHttpMethod method, const char* uri, const char* ip, uint32_t headersCount,
                          const char* const* headersKeys, const char* const* headersValues, uint32_t getArgumentsCount,
                          const char* const* getArgumentsKeys, const char* const* getArgumentsValues)
{
  (void) method;
  (void) uri;
  (void) ip;
  (void) headersCount;
  (void) headersKeys;
  (void) headersValues;
  (void) getArgumentsCount;
  (void) getArgumentsKeys;
  (void) getArgumentsValues;
  return 1;
}

ORTHANC_PLUGINS_API int32_t OrthancPluginInitialize(OrthancPluginContext* context)
{
  OrthancPluginRegisterReceivedInstanceCallback(context, Received);
  OrthancPluginRegisterIncomingDicomInstanceFilter(context, Filter);
  OrthancPluginRegisterOnStoredInstanceCallback(context, Stored);
  OrthancPluginRegisterOnChangeCallback(context, Change);
  OrthancPluginRegisterIncomingHttpRequestFilter2(context, HttpFilter);
  return 0;
}

ORTHANC_PLUGINS_API void OrthancPluginFinalize(void)
{
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetName(void)
{
  return "test-hooks-only";
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetVersion(void)
{
  return "0";
}
