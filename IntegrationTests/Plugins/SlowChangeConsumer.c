/* A slow OnChange consumer, for the integration tests only: sleeps SLOW_CHANGE_MS (default 50) in
 * every NewInstance change, as a plugin doing synchronous work there would. Orthanc delivers changes
 * on one thread, so every other plugin's changes queue behind it. With SLOW_CHANGE_GATE (a path),
 * the first NewInstance change also waits until that file exists (at most a minute): the test holds
 * the change thread for as long as it wants, so that a backlog does not depend on how fast the
 * machine ingests. */
#include <orthanc/OrthancCPlugin.h>

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long delayMs = 50;
static const char* gate = NULL;

static void Pause(long milliseconds)
{
  struct timespec pause;
  pause.tv_sec = milliseconds / 1000;
  pause.tv_nsec = (milliseconds % 1000) * 1000000L;
  nanosleep(&pause, NULL);
}

static OrthancPluginErrorCode OnChange(OrthancPluginChangeType changeType, OrthancPluginResourceType resourceType,
                                       const char* resourceId)
{
  int waited;
  (void) resourceType;
  (void) resourceId;
  if (changeType == OrthancPluginChangeType_NewInstance)
  {
    for (waited = 0; gate != NULL && access(gate, F_OK) != 0 && waited < 60000; waited += 10)
    {
      Pause(10);
    }
    gate = NULL;  /* only the first change waits; one thread delivers them all */
    Pause(delayMs);
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
  gate = getenv("SLOW_CHANGE_GATE");
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
