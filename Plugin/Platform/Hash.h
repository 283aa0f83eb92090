// The plugin's one string hash: 64-bit FNV-1a, no allocation, a few ns for a UID or an AET. Keys
// of the lock-free tables (instance ids, calling AETs, label values) and the name of a duplicate
// copy of the plugin come from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace IngestPerf
{
  inline uint64_t Fnv1a(const char* text, size_t length)
  {
    uint64_t hash = 1469598103934665603ull;
    for (size_t i = 0; i < length; i++)
    {
      hash ^= static_cast<unsigned char>(text[i]);
      hash *= 1099511628211ull;
    }
    return hash;
  }

  // A key for the tables, where 0 marks a free slot: never 0. A null text hashes as "".
  inline uint64_t HashKey(const char* text)
  {
    const uint64_t hash = (text != nullptr) ? Fnv1a(text, strlen(text)) : Fnv1a("", 0);
    return hash == 0 ? 1 : hash;
  }
}
