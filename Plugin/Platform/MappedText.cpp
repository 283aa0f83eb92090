#include "Platform/MappedText.h"

#include <sys/mman.h>

#include <cstring>
#include <mutex>
#include <new>
#include <utility>

namespace IngestPerf
{
  namespace
  {
    constexpr size_t kFirstMapping = 64 * 1024;
    constexpr size_t kLargestSpare = 1024 * 1024;

    // The pages an answer gave back, for the next to take.
    std::mutex spareMutex;
    char* spareData = nullptr;
    size_t spareCapacity = 0;

    // The spare pages and their capacity, or nullptr when there are none.
    char* TakeSpare(size_t& capacity)
    {
      const std::lock_guard<std::mutex> lock(spareMutex);
      char* data = spareData;
      capacity = spareCapacity;
      spareData = nullptr;
      spareCapacity = 0;
      return data;
    }

    // Keeps the pages as the spare (the larger of two kept), or unmaps them.
    void GiveBack(char* data, size_t capacity)
    {
      if (capacity <= kLargestSpare)
      {
        const std::lock_guard<std::mutex> lock(spareMutex);
        if (spareCapacity < capacity)
        {
          std::swap(data, spareData);
          std::swap(capacity, spareCapacity);
        }
      }
      if (data != nullptr)
      {
        munmap(data, capacity);
      }
    }
  }


  MappedText::~MappedText()
  {
    if (data_ != nullptr)
    {
      GiveBack(data_, capacity_);
    }
  }


  void MappedText::ReleaseSpare()
  {
    const std::lock_guard<std::mutex> lock(spareMutex);
    if (spareData != nullptr)
    {
      munmap(spareData, spareCapacity);
      spareData = nullptr;
      spareCapacity = 0;
    }
  }


  void MappedText::Reserve(size_t needed)
  {
    if (data_ == nullptr)
    {
      data_ = TakeSpare(capacity_);  // grown below if too small
    }
    if (needed <= capacity_)
    {
      return;
    }
    size_t capacity = capacity_ == 0 ? kFirstMapping : capacity_;
    while (capacity < needed)
    {
      capacity *= 2;
    }
    void* mapped = data_ == nullptr
                     ? mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                     : mremap(data_, capacity_, capacity, MREMAP_MAYMOVE);
    if (mapped == MAP_FAILED)
    {
      throw std::bad_alloc();
    }
    data_ = static_cast<char*>(mapped);
    capacity_ = capacity;
  }


  MappedText::int_type MappedText::overflow(int_type c)
  {
    if (traits_type::eq_int_type(c, traits_type::eof()))
    {
      return traits_type::not_eof(c);
    }
    const char byte = traits_type::to_char_type(c);
    xsputn(&byte, 1);
    return c;
  }


  std::streamsize MappedText::xsputn(const char* text, std::streamsize count)
  {
    if (count <= 0)
    {
      return 0;
    }
    const size_t n = static_cast<size_t>(count);
    Reserve(size_ + n);
    memcpy(data_ + size_, text, n);
    size_ += n;
    return count;
  }
}
