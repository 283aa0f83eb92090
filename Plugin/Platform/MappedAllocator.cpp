#include "Platform/MappedAllocator.h"

#include <sys/mman.h>

namespace IngestPerf
{
  void* MappedAllocate(size_t bytes)
  {
    if (bytes < kMappedBytes)
    {
      return ::operator new(bytes);
    }
    void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED)
    {
      throw std::bad_alloc();
    }
    return block;
  }


  void MappedFree(void* block, size_t bytes) noexcept
  {
    if (block == nullptr)
    {
      return;
    }
    if (bytes < kMappedBytes)
    {
      ::operator delete(block);
    }
    else
    {
      munmap(block, bytes);  // the kernel rounds the length up to whole pages, as mmap did
    }
  }
}
