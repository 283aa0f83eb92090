/* A slow OnChange consumer, for the integration tests only: sleeps SLOW_CHANGE_MS (default 50) in
 * every NewInstance change, as a plugin doing synchronous work there would. Orthanc delivers changes
 * on one thread, so every other plugin's changes queue behind it. */
#include <orthanc/OrthancCPlugin.h>

#include <stdlib.h>
#include <time.h>

static long delayMs = 50;

static OrthancPluginErrorCode OnChange(OrthancPluginChangeType changeType, OrthancPluginResourceType resourceType,
                                       const char* resourceId)
{
  struct timespec pause;
  (void) resourceType;
  (void) resourceId;
  if (changeType == OrthancPluginChangeType_NewInstance)
  {
    pause.tv_sec = delayMs / 1000;
    pause.tv_nsec = (delayMs % 1000) * 1000000L;
    nanosleep(&pause, NULL);
  }
  return OrthancPluginErrorCode_Success;
}

ORTHANC_PLUGINS_API int32_t OrthancPluginInitialize(OrthancPluginContext* context)
{
  const char* value = getenv("SLOW_CHANGE_MS");
  if (value != NULL)
  {
    delayMs = atol(value);
  }
  OrthancPluginRegisterOnChangeCallback(context, OnChange);
  return 0;
}

ORTHANC_PLUGINS_API void OrthancPluginFinalize(void)
{
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetName(void)
{
  return "test-slow-change-consumer";
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetVersion(void)
{
  return "1.0";
}
