// An allocator for the large, short-lived arrays a REST answer copies (the recent instances of
// /perf/slowest and /perf/trace, the slots of /perf/slots, the streams of /perf/metrics): from
// kMappedBytes up, pages of their own (mmap), unmapped when freed; below, operator new. Freeing a
// block of 128 KB or more that malloc had mapped raises glibc's mmap and trim thresholds to its
// size, for good and for every thread: each of Orthanc's HTTP threads' heaps then keeps what later
// answers leave in it (one /perf/slowest of a full ring raised them to 1.2 MB and 2.4 MB).
#pragma once

#include <cstddef>
#include <new>

namespace IngestPerf
{
  constexpr size_t kMappedBytes = 64 * 1024;

  // Throw std::bad_alloc when the system refuses.
  void* MappedAllocate(size_t bytes);
  void MappedFree(void* block, size_t bytes) noexcept;

  template <typename T>
  struct MappedAllocator
  {
    using value_type = T;

    MappedAllocator() = default;
    template <typename U>
    MappedAllocator(const MappedAllocator<U>&) noexcept
    {
    }

    T* allocate(size_t n)
    {
      static_assert(alignof(T) <= alignof(std::max_align_t), "operator new's alignment");
      if (n > static_cast<size_t>(-1) / sizeof(T))
      {
        throw std::bad_array_new_length();
      }
      return static_cast<T*>(MappedAllocate(n * sizeof(T)));
    }

    void deallocate(T* block, size_t n) noexcept { MappedFree(block, n * sizeof(T)); }

    template <typename U>
    bool operator==(const MappedAllocator<U>&) const noexcept
    {
      return true;
    }
    template <typename U>
    bool operator!=(const MappedAllocator<U>&) const noexcept
    {
      return false;
    }
  };
}
