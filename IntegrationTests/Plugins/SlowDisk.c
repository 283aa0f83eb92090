/* A slow disk, for the bottleneck scenarios only (ingest_perf/bottleneck_scenarios.py): preloaded
 * into Orthanc (LD_PRELOAD), it makes every fsync()/fdatasync() of a file under SLOW_DISK_PREFIX wait
 * SLOW_DISK_MS (default 30) before the real flush, as a busy disk or a network volume makes a flush
 * wait. Orthanc's storage (SyncStorageArea, the default) and the plugin's timed storage flush each
 * file they write, so each attachment costs that much more, inside the storage write; other files
 * (the SQLite index, the log) are not slowed. Not an Orthanc plugin: nothing to load in "Plugins". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int (*FlushFunction)(int);

static int IsSlowed(int fd)
{
  const char* prefix = getenv("SLOW_DISK_PREFIX");
  char link[64];
  char path[4096];
  ssize_t length;
  if (prefix == NULL || prefix[0] == '\0')
  {
    return 0;
  }
  snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  length = readlink(link, path, sizeof(path) - 1);
  if (length <= 0)
  {
    return 0;
  }
  path[length] = '\0';
  return strncmp(path, prefix, strlen(prefix)) == 0;
}

static void Wait(void)
{
  const char* value = getenv("SLOW_DISK_MS");
  long delayMs = value != NULL ? atol(value) : 30;
  struct timespec pause;
  pause.tv_sec = delayMs / 1000;
  pause.tv_nsec = (delayMs % 1000) * 1000000L;
  nanosleep(&pause, NULL);
}

static int Flush(const char* name, int fd)
{
  FlushFunction real = (FlushFunction) dlsym(RTLD_NEXT, name);
  if (IsSlowed(fd))
  {
    Wait();
  }
  return real(fd);
}

int fsync(int fd)
{
  return Flush("fsync", fd);
}

int fdatasync(int fd)
{
  return Flush("fdatasync", fd);
}
