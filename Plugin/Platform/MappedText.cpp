#include "Platform/MappedText.h"

#include <sys/mman.h>

#include <cstring>
#include <new>

namespace IngestPerf
{
  namespace
  {
    constexpr size_t kFirstMapping = 64 * 1024;
  }


  MappedText::~MappedText()
  {
    if (data_ != nullptr)
    {
      munmap(data_, capacity_);
    }
  }


  void MappedText::Reserve(size_t needed)
  {
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
