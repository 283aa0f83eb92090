/* A stand-in for "another plugin that owns the storage area" (Orthanc accepts one per process), for
 * the integration tests only: a flat folder "owner-storage" in Orthanc's working directory, one file
 * per attachment. STORAGE_OWNER_CREATE_MS (default 0) makes each create wait that long first, as an
 * object store's round trip would (the storage_bound scenario). Not a storage anyone should use. */
#include <orthanc/OrthancCPlugin.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static OrthancPluginContext* context = NULL;
static long createDelayMs = 0;

static void PathOf(char* path, size_t size, const char* uuid)
{
  snprintf(path, size, "owner-storage/%s", uuid);
}

static OrthancPluginErrorCode Create(const char* uuid, const void* content, int64_t size, OrthancPluginContentType type)
{
  char path[512];
  FILE* file;
  (void) type;
  if (createDelayMs > 0)
  {
    struct timespec pause;
    pause.tv_sec = createDelayMs / 1000;
    pause.tv_nsec = (createDelayMs % 1000) * 1000000L;
    nanosleep(&pause, NULL);
  }
  PathOf(path, sizeof(path), uuid);
  file = fopen(path, "wb");
  if (file == NULL)
  {
    return OrthancPluginErrorCode_StorageAreaPlugin;
  }
  if (size > 0 && fwrite(content, (size_t) size, 1, file) != 1)
  {
    fclose(file);
    return OrthancPluginErrorCode_StorageAreaPlugin;
  }
  fclose(file);
  return OrthancPluginErrorCode_Success;
}

static OrthancPluginErrorCode ReadWhole(OrthancPluginMemoryBuffer64* target, const char* uuid,
                                        OrthancPluginContentType type)
{
  char path[512];
  struct stat info;
  FILE* file;
  (void) type;
  PathOf(path, sizeof(path), uuid);
  if (stat(path, &info) != 0 || (file = fopen(path, "rb")) == NULL)
  {
    return OrthancPluginErrorCode_UnknownResource;
  }
  if (OrthancPluginCreateMemoryBuffer64(context, target, (uint64_t) info.st_size) != OrthancPluginErrorCode_Success ||
      (info.st_size > 0 && fread(target->data, (size_t) info.st_size, 1, file) != 1))
  {
    fclose(file);
    return OrthancPluginErrorCode_StorageAreaPlugin;
  }
  fclose(file);
  return OrthancPluginErrorCode_Success;
}

static OrthancPluginErrorCode ReadRange(OrthancPluginMemoryBuffer64* target, const char* uuid,
                                        OrthancPluginContentType type, uint64_t start)
{
  char path[512];
  FILE* file;
  (void) type;
  PathOf(path, sizeof(path), uuid);
  file = fopen(path, "rb");
  if (file == NULL)
  {
    return OrthancPluginErrorCode_UnknownResource;
  }
  if (fseek(file, (long) start, SEEK_SET) != 0 ||
      (target->size > 0 && fread(target->data, (size_t) target->size, 1, file) != 1))
  {
    fclose(file);
    return OrthancPluginErrorCode_BadRange;
  }
  fclose(file);
  return OrthancPluginErrorCode_Success;
}

static OrthancPluginErrorCode Remove(const char* uuid, OrthancPluginContentType type)
{
  char path[512];
  (void) type;
  PathOf(path, sizeof(path), uuid);
  unlink(path);
  return OrthancPluginErrorCode_Success;
}

ORTHANC_PLUGINS_API int32_t OrthancPluginInitialize(OrthancPluginContext* c)
{
  const char* delay = getenv("STORAGE_OWNER_CREATE_MS");
  context = c;
  if (delay != NULL)
  {
    createDelayMs = atol(delay);
  }
  mkdir("owner-storage", 0755);
  OrthancPluginRegisterStorageArea2(context, Create, ReadWhole, ReadRange, Remove);
  return 0;
}

ORTHANC_PLUGINS_API void OrthancPluginFinalize(void)
{
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetName(void)
{
  return "test-storage-owner";
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetVersion(void)
{
  return "1.0";
}
