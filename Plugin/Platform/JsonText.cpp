#include "Platform/JsonText.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>

namespace IngestPerf
{
  namespace
  {
    constexpr int kDecimals = 4;

    // The bytes a string holds as they are: printable ASCII but the quote and the backslash.
    struct PlainBytes
    {
      bool plain[256] = {};
      constexpr PlainBytes()
      {
        for (int byte = 0x20; byte < 0x80; byte++)
        {
          plain[byte] = byte != '"' && byte != '\\';
        }
      }
      constexpr bool operator[](unsigned char byte) const { return plain[byte]; }
    };
    constexpr PlainBytes kPlain;

    // The character starting at `c` (a byte of 0x80 or more, or a control), as jsoncpp decodes it.
    unsigned int Codepoint(const char*& c, const char* end)
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

  }


  // A line break and the current indentation, unless the line has just been started.
  void JsonWriter::StartLine()
  {
    if (!indented_)
    {
      // The line break and the indentation in one piece, as deep as an answer goes (then more).
      static const char kIndentation[] = "\n                                                                ";
      constexpr size_t kLevels = (sizeof(kIndentation) - 2) / 2;
      Put(kIndentation, 1 + 2 * std::min(depth_, kLevels));
      for (size_t i = kLevels; i < depth_; i++)
      {
        Put("  ", 2);
      }
    }
  }


  // jsoncpp's writeWithIndent("{"): on a new line, then the first member follows on a line of its own.
  void JsonWriter::Open(Frame& frame)
  {
    if (!frame.opened)
    {
      frame.opened = true;
      StartLine();
      Put(frame.array ? '[' : '{');
      indented_ = false;
      depth_++;
    }
  }


  // Before any value: in an array, the separator and a line of its own (in an object, Key did this).
  void JsonWriter::BeforeValue()
  {
    if (frames_.empty() || !frames_.back().array)
    {
      return;
    }
    Frame& frame = frames_.back();
    Open(frame);
    if (frame.count++ != 0)
    {
      Put(',');
    }
    StartLine();
    indented_ = true;
  }


  void JsonWriter::AfterValue()
  {
    if (!frames_.empty() && frames_.back().array)
    {
      indented_ = false;
    }
  }


  void JsonWriter::Begin(bool array)
  {
    BeforeValue();
    frames_.push_back(Frame{array, false, 0});
  }


  void JsonWriter::End()
  {
    const Frame frame = frames_.back();
    frames_.pop_back();
    if (!frame.opened)
    {
      Put(frame.array ? "[]" : "{}", 2);
    }
    else
    {
      depth_--;
      StartLine();
      Put(frame.array ? ']' : '}');
      indented_ = false;
    }
    AfterValue();
  }


  void JsonWriter::BeginObject()
  {
    Begin(false);
  }


  void JsonWriter::EndObject()
  {
    End();
  }


  void JsonWriter::BeginArray()
  {
    Begin(true);
  }


  void JsonWriter::EndArray()
  {
    End();
  }


  JsonWriter& JsonWriter::Key(const char* name, size_t length)
  {
    Frame& frame = frames_.back();
    Open(frame);
    if (frame.count++ != 0)
    {
      Put(',');
    }
    StartLine();
    String(name, length);  // in an object: no separator of its own
    indented_ = false;
    Put(" : ", 3);
    return *this;
  }


  void JsonWriter::Null()
  {
    BeforeValue();
    Put("null", 4);
    AfterValue();
  }


  void JsonWriter::Bool(bool value)
  {
    BeforeValue();
    value ? Put("true", 4) : Put("false", 5);
    AfterValue();
  }


  template <typename Integer>
  void JsonWriter::WriteInteger(Integer value)
  {
    BeforeValue();
    char buffer[24];
    const std::to_chars_result result = std::to_chars(buffer, buffer + sizeof(buffer), value);
    Put(buffer, static_cast<size_t>(result.ptr - buffer));
    AfterValue();
  }


  void JsonWriter::Int(int64_t value)
  {
    WriteInteger(value);
  }


  void JsonWriter::UInt(uint64_t value)
  {
    WriteInteger(value);
  }


  // printf's "%.4f" (to_chars fixed gives the same digits), then the zeros at the end dropped, but
  // one after the point: 2.5, 3.0, 0.0001.
  void JsonWriter::Real(double value)
  {
    BeforeValue();
    if (!std::isfinite(value))
    {
      std::isnan(value) ? Put("null", 4) : value < 0 ? Put("-1e+9999", 8) : Put("1e+9999", 7);
    }
    else
    {
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
    AfterValue();
  }


  // As jsoncpp quotes strings: \" \\ \b \f \n \r \t, other controls and every character beyond ASCII
  // as \uXXXX (UTF-16 pairs beyond the BMP), malformed UTF-8 as U+FFFD.
  void JsonWriter::String(const char* text, size_t length)
  {
    BeforeValue();
    Put('"');
    const char* end = text + length;
    const char* plain = text;  // start of the bytes not written yet that need no escape
    for (const char* c = text; c != end; c++)
    {
      const unsigned char byte = static_cast<unsigned char>(*c);
      if (kPlain[byte])
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
    AfterValue();
  }


  void JsonWriter::PutHex(unsigned int value)
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


  void JsonWriter::Tree(const Json::Value& value)
  {
    switch (value.type())
    {
      case Json::nullValue:
        Null();
        break;
      case Json::intValue:
        Int(value.asLargestInt());
        break;
      case Json::uintValue:
        UInt(value.asLargestUInt());
        break;
      case Json::realValue:
        Real(value.asDouble());
        break;
      case Json::stringValue:
      {
        const char* begin = nullptr;
        const char* end = nullptr;
        if (value.getString(&begin, &end))
        {
          String(begin, static_cast<size_t>(end - begin));
        }
        else
        {
          String("", 0);
        }
        break;
      }
      case Json::booleanValue:
        Bool(value.asBool());
        break;
      case Json::arrayValue:
        BeginArray();
        for (const Json::Value& element : value)
        {
          Tree(element);
        }
        EndArray();
        break;
      case Json::objectValue:
        BeginObject();
        // The tree's order, which is the keys' (as jsoncpp's getMemberNames gives them).
        for (Json::Value::const_iterator member = value.begin(); member != value.end(); ++member)
        {
          const char* keyEnd = nullptr;
          const char* key = member.memberName(&keyEnd);
          Key(key, static_cast<size_t>(keyEnd - key));
          Tree(*member);
        }
        EndObject();
        break;
    }
  }


  JsonFragment::JsonFragment(const Json::Value& value, size_t depth) :
    value_(value),
    depth_(depth)
  {
    MappedText text;
    JsonWriter writer(text);
    writer.depth_ = depth;
    writer.indented_ = false;  // as after its key
    writer.Tree(value);
    text_.assign(text.Data(), text.Size());
  }


  void JsonWriter::Fragment(const JsonFragment& fragment)
  {
    if (frames_.empty() || frames_.back().array || depth_ != fragment.depth_)
    {
      Tree(fragment.value_);
      return;
    }
    Put(fragment.text_.data(), fragment.text_.size());
  }


  void WriteJsonText(MappedText& text, const Json::Value& value)
  {
    JsonWriter(text).Tree(value);
  }
}
