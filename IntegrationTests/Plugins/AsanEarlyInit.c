/* Preloaded after the AddressSanitizer runtime into an uninstrumented Orthanc, so that the
 * sanitized build of the plugin can be tested inside it. Without it Orthanc hangs at start-up:
 * libp11-kit's constructor (Orthanc links it through curl and gnutls) runs before the preloaded
 * runtime's and calls newlocale(), which holds glibc's locale lock while it calls malloc(); that
 * first malloc initialises ASan, whose dlsym("swift_demangle") fails, and dlerror() translates its
 * message under the same lock, leaving it corrupted; Orthanc's std::locale then waits forever.
 * This newlocale() initialises ASan with a malloc() outside the lock, then calls glibc's. Its
 * version (GLIBC_2.3, set by AsanEarlyInit.map) is what libp11-kit asks for. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <locale.h>
#include <stdlib.h>

locale_t newlocale(int mask, const char* name, locale_t base)
{
  static locale_t (*real)(int, const char*, locale_t);
  if (real == NULL)
  {
    void* volatile first = malloc(1); /* volatile: the compiler must not drop the pair */
    free(first);
    real = (locale_t(*)(int, const char*, locale_t))dlsym(RTLD_NEXT, "newlocale");
  }
  return real(mask, name, base);
}
