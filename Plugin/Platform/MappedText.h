// The text of one REST answer, written by a std::ostream into pages of its own (mmap), handed to
// Orthanc, then unmapped: a large answer's text (megabytes for /perf/trace) never passes through
// malloc. Freed there, it would stay in the arena of the HTTP thread that built it, and raise
// glibc's dynamic mmap and trim thresholds, which make every arena keep more memory for good.
// The pages of the last answer of at most 1 MiB are kept for the next (one spare mapping for the
// process): an answer then writes into pages already there instead of faulting fresh ones in and
// unmapping them (an unmapping interrupts every CPU running one of Orthanc's threads).
#pragma once

#include <cstddef>
#include <cstring>
#include <streambuf>

namespace IngestPerf
{
  class MappedText : public std::streambuf
  {
  public:
    MappedText() = default;
    ~MappedText() override;
    MappedText(const MappedText&) = delete;
    MappedText& operator=(const MappedText&) = delete;

    // Unmaps the spare pages: before the plugin is unloaded.
    static void ReleaseSpare();

    const char* Data() const { return data_; }
    size_t Size() const { return size_; }
    size_t Capacity() const { return capacity_; }

    // What a stream's write does, without the stream. Throws std::bad_alloc when the system refuses
    // the pages.
    void Append(const char* text, size_t count)
    {
      if (count == 0)
      {
        return;
      }
      if (count > capacity_ - size_)
      {
        Reserve(size_ + count);
      }
      std::memcpy(data_ + size_, text, count);
      size_ += count;
    }
    void Append(char c) { Append(&c, 1); }

  protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* text, std::streamsize count) override;

  private:
    void Reserve(size_t needed);  // throws std::bad_alloc when the system refuses the pages

    char* data_ = nullptr;
    size_t size_ = 0;
    size_t capacity_ = 0;
  };
}
