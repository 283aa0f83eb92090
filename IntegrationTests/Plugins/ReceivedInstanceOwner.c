/* A stand-in for "another plugin that owns the ReceivedInstanceCallback" (Orthanc accepts one per
 * process), for the integration tests only. It keeps every instance as is and tells, at
 * GET /test-owner/status, whether Orthanc let it register. */
#include <orthanc/OrthancCPlugin.h>

#include <stdio.h>

static OrthancPluginContext* context = NULL;
static int registered = 0;

static OrthancPluginReceivedInstanceAction KeepAsIs(OrthancPluginMemoryBuffer64* modified, const void* buffer,
                                                    uint64_t size, OrthancPluginInstanceOrigin origin)
{
  (void) modified;
  (void) buffer;
  (void) size;
  (void) origin;
  return OrthancPluginReceivedInstanceAction_KeepAsIs;
}

static OrthancPluginErrorCode Status(OrthancPluginRestOutput* output, const char* url,
                                     const OrthancPluginHttpRequest* request)
{
  char answer[64];
  (void) url;
  (void) request;
  snprintf(answer, sizeof(answer), "{\"registered\": %s}", registered ? "true" : "false");
  OrthancPluginAnswerBuffer(context, output, answer, strlen(answer), "application/json");
  return OrthancPluginErrorCode_Success;
}

ORTHANC_PLUGINS_API int32_t OrthancPluginInitialize(OrthancPluginContext* c)
{
  context = c;
  registered = (OrthancPluginRegisterReceivedInstanceCallback(context, KeepAsIs) == OrthancPluginErrorCode_Success);
  OrthancPluginRegisterRestCallback(context, "/test-owner/status", Status);
  return 0;
}

ORTHANC_PLUGINS_API void OrthancPluginFinalize(void)
{
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetName(void)
{
  return "test-received-instance-owner";
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetVersion(void)
{
  return "1.0";
}
