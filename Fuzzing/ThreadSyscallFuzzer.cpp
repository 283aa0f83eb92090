// ParseThreadSyscall (Correlation/ThreadActivity): the text of /proc/self/task/<tid>/syscall. The
// input is copied to a buffer of exactly its size, so that AddressSanitizer catches any read past
// it. Properties: a Blocked result has exactly the form "<decimal> <8 hexadecimal words>" (each of
// at most 16 digits, an optional 0x), and printing it back in the kernel's form parses to the same
// values; "running" and a leading "-1" are the only other kinds; anything else is Unknown.
#include "FuzzProperty.h"

#include "Correlation/ThreadActivity.h"

#include <cinttypes>
#include <cstring>
#include <memory>

using namespace IngestPerf;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
  std::unique_ptr<char[]> text(new char[size == 0 ? 1 : size]);
  memcpy(text.get(), data, size);
  const ThreadActivity activity = ParseThreadSyscall(text.get(), size);
  if (activity.kind != ThreadActivity::Kind::Blocked)
  {
    FUZZ_PROPERTY(activity.number == -1);
    return 0;
  }
  FUZZ_PROPERTY(activity.number >= 0 && activity.number < 1000000);
  FUZZ_PROPERTY(size > 0 && data[0] >= '0' && data[0] <= '9');
  char printed[256];
  snprintf(printed, sizeof(printed),
           "%ld 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x1 0x2\n",
           activity.number, activity.arguments[0], activity.arguments[1], activity.arguments[2], activity.arguments[3],
           activity.arguments[4], activity.arguments[5]);
  const ThreadActivity again = ParseThreadSyscall(printed, strlen(printed));
  FUZZ_PROPERTY(again.kind == ThreadActivity::Kind::Blocked && again.number == activity.number);
  for (size_t i = 0; i < 6; i++)
  {
    FUZZ_PROPERTY(again.arguments[i] == activity.arguments[i]);
  }
  // The futex and descriptor readings never crash on any arguments (poll and select read memory
  // at the given addresses through process_vm_readv, which fails cleanly on a bad one).
  uint64_t address = 0;
  bool timed = false;
  activity.IsFutexWait(address, timed);
  activity.WaitedDescriptor();
  return 0;
}
