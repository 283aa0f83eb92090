// A lock for critical sections of a few nanoseconds between at most two or three threads: spins
// a bounded number of times, then gives up, and the caller counts the give-up. A holder that runs
// releases within nanoseconds; a holder the scheduler preempted keeps the lock for milliseconds,
// and no amount of spinning helps then. So the bound is short: 32 pauses, measured at 0.9 us per
// give-up on this project's machines (AMD EPYC, HotPathBench BM_SpinLockGiveUp); on Intel cores
// whose pause takes about 140 cycles, about 1.5 us. On aarch64 the hint is `isb`, not `yield`:
// `yield` is a NOP on cores without SMT (nearly all Arm servers), so 32 of them would give up
// within a few nanoseconds; an `isb` waits for the pipeline to drain, tens of cycles, as a pause
// does (what Rust's core::hint::spin_loop emits there, rust-lang/rust#84725; golang/go#69232).
// 32-bit Arm keeps `yield`, a NOP on most of its cores too: the bound is shorter there.
#pragma once

#include <atomic>

namespace IngestPerf
{
  constexpr int kSpinLockAttempts = 32;

  inline bool BoundedSpinLock(std::atomic<bool>& locked)
  {
    for (int attempt = 0; attempt < kSpinLockAttempts; attempt++)
    {
      if (!locked.load(std::memory_order_relaxed) && !locked.exchange(true, std::memory_order_acquire))
      {
        return true;
      }
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      __asm__ __volatile__("isb sy" ::: "memory");
#elif defined(__arm__)
      __asm__ __volatile__("yield" ::: "memory");
#endif
    }
    return false;
  }
}
