#include "Platform/JsonText.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string>

namespace IngestPerf
{
  namespace
  {
    class JsonTextWriter
    {
    public:
      explicit JsonTextWriter(MappedText& text) :
        text_(text)
      {
      }

      void Write(const Json::Value& value)
      {
        indented_ = true;
        WriteValue(value);
      }

    private:
      void Put(const char* text, size_t count) { text_.Append(text, count); }
      void Put(const char* text) { text_.Append(text, std::strlen(text)); }
      void Put(char c) { text_.Append(c); }

      // A line break and the current indentation, unless the line has just been started.
      void StartLine()
      {
        if (!indented_)
        {
          Put('\n');
          for (size_t i = 0; i < depth_; i++)
          {
            Put("  ", 2);
          }
        }
      }

      // jsoncpp's writeWithIndent: on a new line, then the next value may follow on the same one.
      void PutOnNewLine(const char* text)
      {
        StartLine();
        Put(text);
        indented_ = false;
      }

      void WriteValue(const Json::Value& value)
      {
        switch (value.type())
        {
          case Json::nullValue:
            Put("null", 4);
            break;
          case Json::intValue:
            WriteInteger(value.asLargestInt());
            break;
          case Json::uintValue:
            WriteInteger(value.asLargestUInt());
            break;
          case Json::realValue:
            WriteReal(value.asDouble());
            break;
          case Json::stringValue:
          {
            const char* begin = nullptr;
            const char* end = nullptr;
            if (value.getString(&begin, &end))
            {
              WriteString(begin, static_cast<size_t>(end - begin));
            }
            break;
          }
          case Json::booleanValue:
            value.asBool() ? Put("true", 4) : Put("false", 5);
            break;
          case Json::arrayValue:
            WriteArray(value);
            break;
          case Json::objectValue:
            WriteObject(value);
            break;
        }
      }

      // Every element on a line of its own (jsoncpp's commentStyle "All" makes every array so).
      void WriteArray(const Json::Value& value)
      {
        if (value.empty())
        {
          Put("[]", 2);
          return;
        }
        PutOnNewLine("[");
        depth_++;
        const Json::Value::const_iterator end = value.end();
        for (Json::Value::const_iterator element = value.begin(); element != end;)
        {
          StartLine();
          indented_ = true;
          WriteValue(*element);
          indented_ = false;
          if (++element != end)
          {
            Put(',');
          }
        }
        depth_--;
        PutOnNewLine("]");
      }

      void WriteObject(const Json::Value& value)
      {
        if (value.empty())
        {
          Put("{}", 2);
          return;
        }
        PutOnNewLine("{");
        depth_++;
        // The tree's order, which is the keys' (as jsoncpp's getMemberNames gives them).
        const Json::Value::const_iterator end = value.end();
        for (Json::Value::const_iterator member = value.begin(); member != end;)
        {
          StartLine();
          const char* keyEnd = nullptr;
          const char* key = member.memberName(&keyEnd);
          WriteString(key, static_cast<size_t>(keyEnd - key));
          indented_ = false;
          Put(" : ", 3);
          WriteValue(*member);
          if (++member != end)
          {
            Put(',');
          }
        }
        depth_--;
        PutOnNewLine("}");
      }

      template <typename Integer>
      void WriteInteger(Integer value)
      {
        char buffer[24];
        const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
        Put(buffer, static_cast<size_t>(result.ptr - buffer));
      }

      // printf's "%.4f" (to_chars fixed gives the same digits), then the zeros at the end dropped,
      // but one after the point: 2.5, 3.0, 0.0001.
      void WriteReal(double value)
      {
        if (!std::isfinite(value))
        {
          Put(std::isnan(value) ? "null" : (value < 0 ? "-1e+9999" : "1e+9999"));
          return;
        }
        char buffer[400];  // the largest double has 309 digits before the point
        const std::to_chars_result result =
          std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::fixed, kDecimals);
        char* end = result.ptr;
        while (end[-1] == '0' && end[-2] != '.')
        {
          end--;
        }
        Put(buffer, static_cast<size_t>(end - buffer));
      }

      // As jsoncpp quotes strings: \" \\ \b \f \n \r \t, other controls and every character beyond
      // ASCII as \uXXXX (UTF-16 pairs beyond the BMP), malformed UTF-8 as U+FFFD.
      void WriteString(const char* text, size_t length)
      {
        Put('"');
        const char* end = text + length;
        const char* plain = text;  // start of the bytes not written yet that need no escape
        for (const char* c = text; c != end; c++)
        {
          const unsigned char byte = static_cast<unsigned char>(*c);
          if (byte >= 0x20 && byte < 0x80 && byte != '"' && byte != '\\')
          {
            continue;
          }
          Put(plain, static_cast<size_t>(c - plain));
          switch (byte)
          {
            case '"':
              Put("\\\"", 2);
              break;
            case '\\':
              Put("\\\\", 2);
              break;
            case '\b':
              Put("\\b", 2);
              break;
            case '\f':
              Put("\\f", 2);
              break;
            case '\n':
              Put("\\n", 2);
              break;
            case '\r':
              Put("\\r", 2);
              break;
            case '\t':
              Put("\\t", 2);
              break;
            default:
            {
              unsigned int codepoint = Codepoint(c, end);  // moves c to the character's last byte
              if (codepoint >= 0x10000)
              {
                codepoint -= 0x10000;
                PutHex(0xd800 + ((codepoint >> 10) & 0x3ff));
                PutHex(0xdc00 + (codepoint & 0x3ff));
              }
              else
              {
                PutHex(codepoint);
              }
            }
          }
          plain = c + 1;
        }
        Put(plain, static_cast<size_t>(end - plain));
        Put('"');
      }

      void PutHex(unsigned int value)
      {
        static const char digits[] = "0123456789abcdef";
        const char text[6] = {'\\',
                              'u',
                              digits[(value >> 12) & 0xf],
                              digits[(value >> 8) & 0xf],
                              digits[(value >> 4) & 0xf],
                              digits[value & 0xf]};
        Put(text, sizeof(text));
      }

      // The character starting at `c` (a byte of 0x80 or more, or a control), as jsoncpp decodes it.
      static unsigned int Codepoint(const char*& c, const char* end)
      {
        constexpr unsigned int kReplacement = 0xFFFD;
        const unsigned int first = static_cast<unsigned char>(*c);
        const auto next = [c](int k) { return static_cast<unsigned int>(static_cast<unsigned char>(c[k])) & 0x3F; };
        if (first < 0x80)
        {
          return first;
        }
        if (first < 0xE0)
        {
          if (end - c < 2)
          {
            return kReplacement;
          }
          const unsigned int value = ((first & 0x1F) << 6) | next(1);
          c += 1;
          return value < 0x80 ? kReplacement : value;
        }
        if (first < 0xF0)
        {
          if (end - c < 3)
          {
            return kReplacement;
          }
          const unsigned int value = ((first & 0x0F) << 12) | (next(1) << 6) | next(2);
          c += 2;
          return (value >= 0xD800 && value <= 0xDFFF) || value < 0x800 ? kReplacement : value;
        }
        if (first < 0xF8)
        {
          if (end - c < 4)
          {
            return kReplacement;
          }
          const unsigned int value = ((first & 0x07) << 18) | (next(1) << 12) | (next(2) << 6) | next(3);
          c += 3;
          return value < 0x10000 ? kReplacement : value;
        }
        return kReplacement;
      }

      static constexpr int kDecimals = 4;

      MappedText& text_;
      size_t depth_ = 0;
      bool indented_ = true;  // the line holds nothing but its indentation (or is the first)
    };
  }


  void WriteJsonText(MappedText& text, const Json::Value& value)
  {
    JsonTextWriter(text).Write(value);
  }
}
