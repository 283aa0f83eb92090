/* A site's own native plugin, for the integration tests only (test_guests_*.py): it registers an
 * IncomingCStoreInstanceFilter that refuses some instances (those whose SOP Instance UID ends in an
 * odd digit, with the DIMSE status 0xA801) and Orthanc's single ReceivedInstanceCallback (keeps every
 * instance as is). It records, one JSON line each, the OrthancPluginErrorCode of both registrations
 * and every call with the SOP Instance UID it saw, appended to $SITE_RECORDS/c-plugin.jsonl (nothing
 * is recorded without SITE_RECORDS). */
#include <orthanc/OrthancCPlugin.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REFUSED_STATUS 0xA801

static OrthancPluginContext* context = NULL;
static int records = -1;

/* One line per write() on a descriptor opened with O_APPEND: lines of concurrent calls never mix. */
static void Record(const char* line)
{
  if (records >= 0)
  {
    ssize_t written = write(records, line, strlen(line));
    (void) written;
  }
}

/* The SOP Instance UID (0008,0018) of a Part-10 file in little endian, explicit or implicit VR, as a
 * JSON value: the first occurrence of its tag follows the meta header and precedes the pixel data.
 * null if there is none (a body that is not DICOM). */
static void SopInstanceUid(const uint8_t* data, uint64_t size, char* uid, size_t capacity)
{
  static const uint8_t tag[4] = {0x08, 0x00, 0x18, 0x00};
  uint64_t i;
  strcpy(uid, "null");
  for (i = 132; i + 8 <= size; i++)
  {
    if (memcmp(data + i, tag, 4) == 0)
    {
      uint64_t length;
      const uint64_t start = i + 8;
      if (data[i + 4] == 'U' && data[i + 5] == 'I')
      {
        length = data[i + 6] | (data[i + 7] << 8);  /* explicit VR: 2-byte length */
      }
      else
      {
        length = data[i + 4] | (data[i + 5] << 8) | ((uint64_t) data[i + 6] << 16) | ((uint64_t) data[i + 7] << 24);
      }
      if (start + length > size || length + 3 > capacity)
      {
        return;
      }
      uid[0] = '"';
      memcpy(uid + 1, data + start, length);
      while (length > 0 && (uid[length] == '\0' || uid[length] == ' '))
      {
        length--;
      }
      uid[length + 1] = '"';
      uid[length + 2] = '\0';
      return;
    }
  }
}

/* The site's rule, on a quoted UID: refused if it ends in an odd digit. */
static int RefusedBySite(const char* uid)
{
  size_t length = strlen(uid);
  return length > 2 && uid[length - 2] >= '0' && uid[length - 2] <= '9' && (uid[length - 2] - '0') % 2 == 1;
}


static int32_t CStoreFilter(uint16_t* dimseStatus, const OrthancPluginDicomInstance* instance)
{
  char uid[128];
  char line[256];
  int refused;
  SopInstanceUid((const uint8_t*) OrthancPluginGetInstanceData(context, instance),
                 (uint64_t) OrthancPluginGetInstanceSize(context, instance), uid, sizeof(uid));
  refused = RefusedBySite(uid);
  snprintf(line, sizeof(line), "{\"hook\": \"cstoreFilter\", \"sop\": %s, \"refused\": %s}\n", uid,
           refused ? "true" : "false");
  Record(line);
  if (refused)
  {
    *dimseStatus = REFUSED_STATUS;
    return 0;
  }
  return 1;
}

static OrthancPluginReceivedInstanceAction ReceivedInstance(OrthancPluginMemoryBuffer64* modified, const void* buffer,
                                                            uint64_t size, OrthancPluginInstanceOrigin origin)
{
  char uid[128];
  char line[256];
  (void) modified;
  SopInstanceUid((const uint8_t*) buffer, size, uid, sizeof(uid));
  snprintf(line, sizeof(line), "{\"hook\": \"receivedInstance\", \"sop\": %s, \"origin\": %d}\n", uid, (int) origin);
  Record(line);
  return OrthancPluginReceivedInstanceAction_KeepAsIs;
}

ORTHANC_PLUGINS_API int32_t OrthancPluginInitialize(OrthancPluginContext* c)
{
  char line[256];
  const char* folder = getenv("SITE_RECORDS");
  OrthancPluginErrorCode filter, received;
  context = c;
  if (folder != NULL)
  {
    char path[4096];
    snprintf(path, sizeof(path), "%s/c-plugin.jsonl", folder);
    records = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  }
  filter = OrthancPluginRegisterIncomingCStoreInstanceFilter(context, CStoreFilter);
  received = OrthancPluginRegisterReceivedInstanceCallback(context, ReceivedInstance);
  snprintf(line, sizeof(line), "{\"hook\": \"register\", \"what\": \"IncomingCStoreInstanceFilter\", \"code\": %d}\n",
           (int) filter);
  Record(line);
  snprintf(line, sizeof(line), "{\"hook\": \"register\", \"what\": \"ReceivedInstanceCallback\", \"code\": %d}\n",
           (int) received);
  Record(line);
  return 0;
}

ORTHANC_PLUGINS_API void OrthancPluginFinalize(void)
{
  if (records >= 0)
  {
    close(records);
    records = -1;
  }
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetName(void)
{
  return "test-site-filters";
}

ORTHANC_PLUGINS_API const char* OrthancPluginGetVersion(void)
{
  return "1.0";
}
