// What the fuzz targets share: a property that must hold for every input. A failure prints the
// property and aborts, which libFuzzer reports as a crash and saves the input (crash-<sha1>).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define FUZZ_PROPERTY(condition)                                                                                       \
  do                                                                                                                   \
  {                                                                                                                    \
    if (!(condition))                                                                                                  \
    {                                                                                                                  \
      fprintf(stderr, "\n%s:%d: property failed: %s\n", __FILE__, __LINE__, #condition);                               \
      abort();                                                                                                         \
    }                                                                                                                  \
  } while (false)

namespace IngestPerf
{
  namespace Fuzzing
  {
    // The input cut at every `separator`: the pieces, empty ones included.
    inline std::vector<std::string> Split(const uint8_t* data, size_t size, char separator)
    {
      std::vector<std::string> pieces(1);
      for (size_t i = 0; i < size; i++)
      {
        if (static_cast<char>(data[i]) == separator)
        {
          pieces.emplace_back();
        }
        else
        {
          pieces.back() += static_cast<char>(data[i]);
        }
      }
      return pieces;
    }
  }
}
