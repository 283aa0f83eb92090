#include "Correlation/OpenConnections.h"

#include "Timeline/MonotonicClock.h"

#include <arpa/inet.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <vector>

namespace IngestPerf
{
  namespace
  {
    bool ParseHex(uint64_t& value, const std::string& text)
    {
      if (text.empty() || text.size() > 16)
      {
        return false;
      }
      value = 0;
      for (char c : text)
      {
        int digit;
        if (c >= '0' && c <= '9')
        {
          digit = c - '0';
        }
        else if (c >= 'A' && c <= 'F')
        {
          digit = c - 'A' + 10;
        }
        else if (c >= 'a' && c <= 'f')
        {
          digit = c - 'a' + 10;
        }
        else
        {
          return false;
        }
        value = value * 16 + static_cast<uint64_t>(digit);
      }
      return true;
    }

    // The kernel prints addresses as 32-bit words in host (little-endian) order.
    std::string IPv4(uint32_t word)
    {
      char text[16];
      snprintf(text, sizeof(text), "%u.%u.%u.%u", word & 0xff, (word >> 8) & 0xff, (word >> 16) & 0xff, word >> 24);
      return text;
    }

    // The text form of a table address, RFC 5952's as inet_ntop writes it ("::1", the form clients
    // and logs show); false for anything but 8 or 32 hex digits.
    bool Address(std::string& text, const std::string& hex)
    {
      uint64_t value;
      if (hex.size() == 8 && ParseHex(value, hex))
      {
        text = IPv4(static_cast<uint32_t>(value));
        return true;
      }
      if (hex.size() != 32)
      {
        return false;
      }
      uint32_t words[4];
      unsigned char bytes[16];
      for (int i = 0; i < 4; i++)
      {
        if (!ParseHex(value, hex.substr(8 * i, 8)))
        {
          return false;
        }
        words[i] = static_cast<uint32_t>(value);
        for (int b = 0; b < 4; b++)
        {
          bytes[4 * i + b] = static_cast<unsigned char>(words[i] >> (8 * b));
        }
      }
      if (words[0] == 0 && words[1] == 0 && words[2] == 0xffff0000u)
      {
        text = IPv4(words[3]);  // an IPv4 client on a dual-stack socket
        return true;
      }
      char buffer[INET6_ADDRSTRLEN];
      if (inet_ntop(AF_INET6, bytes, buffer, sizeof(buffer)) == nullptr)
      {
        return false;
      }
      text = buffer;
      return true;
    }
  }


  void ParseProcNetTcp(OpenConnections& target, const std::string& text, uint16_t port)
  {
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);  // header
    while (std::getline(lines, line))
    {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      if (!(fields >> slot >> local >> remote >> state))
      {
        continue;
      }
      const size_t localColon = local.find(':');
      const size_t remoteColon = remote.find(':');
      uint64_t localPort, stateValue;
      std::string remoteAddress;
      if (localColon == std::string::npos || remoteColon == std::string::npos ||
          !ParseHex(localPort, local.substr(localColon + 1)) || !ParseHex(stateValue, state) ||
          !Address(remoteAddress, remote.substr(0, remoteColon)))
      {
        continue;  // not a line of the kernel's table
      }
      if (localPort == port && stateValue == 1 /* TCP_ESTABLISHED */)
      {
        target.count++;
        target.byRemoteIp[remoteAddress]++;
      }
    }
  }


  namespace
  {
    bool IsSpace(char c)
    {
      // What operator>> skips in the classic locale.
      return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
    }

    bool IsHex(char c)
    {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    // ParseHex on [begin, end), without a copy.
    bool HexRange(uint64_t& value, const char* begin, const char* end)
    {
      if (begin == end || end - begin > 16)
      {
        return false;
      }
      value = 0;
      for (const char* c = begin; c != end; c++)
      {
        if (!IsHex(*c))
        {
          return false;
        }
        value = value * 16 + static_cast<uint64_t>(*c <= '9' ? *c - '0' : (*c | 0x20) - 'a' + 10);
      }
      return true;
    }

    const char* FindChar(const char* begin, const char* end, char wanted)
    {
      while (begin != end && *begin != wanted)
      {
        begin++;
      }
      return begin;
    }
  }


  namespace
  {
    // One pass over the table for both ports: the sampler reads a table that lists every socket of
    // the host (thousands of lines on a busy server), so each line costs a memchr to its end and
    // the parsing of its first fields, and the rest only when its local port is one of the two.
    void CountEstablishedLines(const std::string& text, const uint16_t ports[2], uint64_t counts[2])
    {
      const char* const end = text.data() + text.size();
      const char* line = static_cast<const char*>(std::memchr(text.data(), '\n', text.size()));  // header
      while (line != nullptr && line != end)
      {
        line++;  // past the '\n'
        const char* found = static_cast<const char*>(std::memchr(line, '\n', static_cast<size_t>(end - line)));
        const char* const lineEnd = found == nullptr ? end : found;
        // The first four whitespace-separated fields: slot, local, remote, state.
        const char* fields[4][2];
        const char* c = line;
        int n = 0;
        for (; n < 4; n++)
        {
          while (c != lineEnd && IsSpace(*c))
          {
            c++;
          }
          if (c == lineEnd)
          {
            break;
          }
          fields[n][0] = c;
          while (c != lineEnd && !IsSpace(*c))
          {
            c++;
          }
          fields[n][1] = c;
        }
        line = found;
        if (n < 4)
        {
          continue;
        }
        const char* localColon = FindChar(fields[1][0], fields[1][1], ':');
        uint64_t localPort = 0;
        if (localColon == fields[1][1] || !HexRange(localPort, localColon + 1, fields[1][1]) ||
            (localPort != ports[0] && localPort != ports[1]))
        {
          continue;  // another port, or not a line of the kernel's table: counts nothing either way
        }
        const char* remoteColon = FindChar(fields[2][0], fields[2][1], ':');
        uint64_t state = 0;
        uint64_t unused = 0;
        const ptrdiff_t remoteLength = remoteColon - fields[2][0];
        if (remoteColon == fields[2][1] || !HexRange(state, fields[3][0], fields[3][1]) ||
            !(remoteLength == 8 || remoteLength == 32) || !HexRange(unused, fields[2][0], fields[2][0] + 8) ||
            (remoteLength == 32 && (!HexRange(unused, fields[2][0] + 8, fields[2][0] + 24) ||
                                    !HexRange(unused, fields[2][0] + 24, remoteColon))))
        {
          continue;  // not a line of the kernel's table
        }
        if (state == 1 /* TCP_ESTABLISHED */)
        {
          counts[0] += localPort == ports[0] ? 1 : 0;
          counts[1] += localPort == ports[1] ? 1 : 0;
        }
      }
    }
  }


  uint64_t CountEstablished(const std::string& text, uint16_t port)
  {
    const uint16_t ports[2] = {port, port};
    uint64_t counts[2] = {0, 0};
    CountEstablishedLines(text, ports, counts);
    return counts[0];
  }


  namespace
  {
    // Calls read(text) with the whole text of each table that can be opened (tcp, then tcp6);
    // returns whether any could.
    template <typename Read>
    bool ReadTables(Read read)
    {
      bool any = false;
      std::string text;
      char buffer[4096];
      for (const char* path : {"/proc/self/net/tcp", "/proc/self/net/tcp6"})
      {
        std::FILE* file = std::fopen(path, "r");
        if (file == nullptr)
        {
          continue;
        }
        text.clear();
        size_t bytes;
        while ((bytes = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
        {
          text.append(buffer, bytes);
        }
        std::fclose(file);
        any = true;
        read(text);
      }
      return any;
    }
  }


  void CountOpenConnections(uint16_t first, uint16_t second, OpenConnections& toFirst, OpenConnections& toSecond)
  {
    toFirst = OpenConnections();
    toSecond = OpenConnections();
    toFirst.readNs = toSecond.readNs = MonotonicNowNs();
    const uint16_t ports[2] = {first, second};
    uint64_t counts[2] = {0, 0};
    toFirst.available = toSecond.available =
      ReadTables([&](const std::string& text) { CountEstablishedLines(text, ports, counts); });
    toFirst.count = counts[0];
    toSecond.count = counts[1];
  }


  OpenConnections ReadOpenConnections(uint16_t port)
  {
    OpenConnections result;
    result.readNs = MonotonicNowNs();
    result.available = ReadTables([&](const std::string& text) { ParseProcNetTcp(result, text, port); });
    return result;
  }
}
