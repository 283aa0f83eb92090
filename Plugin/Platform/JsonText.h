// The text of a JSON answer, written straight into the answer's pages, in the layout of jsoncpp's
// StreamWriterBuilder with indentation "  ", 4 decimal places and its other defaults (arrays one
// element per line, non-ASCII escaped as \uXXXX, NaN as null), without its std::ostream, whose
// per-token calls cost a third of a /perf/stats answer with every table full.
#pragma once

#include "Platform/MappedText.h"

#include <json/value.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace IngestPerf
{
  class JsonFragment;

  // A JSON document written as it is built, member after member, with no tree: /perf/stats with
  // every table full has about 3,300 values, and building, writing and freeing a Json::Value tree of
  // them (a map node each, then glibc folding the freed nodes back) was about 60% of the route's
  // CPU. Members come out in the order they are written. The caller pairs every Begin with its End
  // and gives each member of an object a Key first; a Json::Value can be written anywhere a value
  // goes (its members in jsoncpp's order, the keys'). Empty objects and arrays are "{}" and "[]".
  class JsonWriter
  {
  public:
    explicit JsonWriter(MappedText& text) :
      text_(text)
    {
    }

    void BeginObject();
    void EndObject();
    void BeginArray();
    void EndArray();

    JsonWriter& Key(const char* name, size_t length);
    JsonWriter& Key(const char* name) { return Key(name, std::strlen(name)); }
    JsonWriter& Key(const std::string& name) { return Key(name.data(), name.size()); }

    void Null();
    void Bool(bool value);
    void Int(int64_t value);
    void UInt(uint64_t value);
    void Real(double value);
    void String(const char* text, size_t length);
    void String(const char* text) { String(text, std::strlen(text)); }
    void String(const std::string& text) { String(text.data(), text.size()); }
    void Tree(const Json::Value& value);
    void Fragment(const JsonFragment& fragment);

    // One value of whichever type: integers as integers, floating point as reals (3.0), as the
    // Json::Value of the same C++ type would be written.
    template <typename T>
    void Value(const T& value)
    {
      if constexpr (std::is_same_v<T, bool>)
      {
        Bool(value);
      }
      else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>)
      {
        Int(value);
      }
      else if constexpr (std::is_integral_v<T>)
      {
        UInt(value);
      }
      else if constexpr (std::is_floating_point_v<T>)
      {
        Real(value);
      }
      else if constexpr (std::is_same_v<T, std::nullptr_t>)
      {
        Null();
      }
      else if constexpr (std::is_same_v<T, Json::Value>)
      {
        Tree(value);
      }
      else
      {
        String(value);
      }
    }

    // A member of the object being written: Key(name), then its value.
    template <typename T>
    void Member(const char* name, const T& value)
    {
      Key(name);
      Value(value);
    }

    // The members of objects, the elements of arrays, not closed yet (0 once the document is whole).
    size_t OpenContainers() const { return frames_.size(); }

  private:
    friend class JsonFragment;

    struct Frame
    {
      bool array;
      bool opened;  // its "{" or "[" written: not before its first member, an empty one is "{}"
      size_t count;
    };

    void Put(const char* text, size_t count) { text_.Append(text, count); }
    void Put(char c) { text_.Append(c); }
    void StartLine();
    void Open(Frame& frame);
    void BeforeValue();
    void AfterValue();
    void Begin(bool array);
    void End();
    void PutHex(unsigned int value);
    template <typename Integer>
    void WriteInteger(Integer value);

    MappedText& text_;
    std::vector<Frame> frames_;
    size_t depth_ = 0;
    bool indented_ = true;  // the line holds nothing but its indentation (or is the first)
  };

  // A value that never changes, written as a member `depth` containers deep once, then copied into
  // every answer that has it there (the vocabulary's definitions, 205 values of every /perf/stats):
  // as Tree would write it. Elsewhere, JsonWriter::Fragment writes the tree.
  class JsonFragment
  {
  public:
    JsonFragment(const Json::Value& value, size_t depth);

  private:
    friend class JsonWriter;

    Json::Value value_;
    size_t depth_;
    std::string text_;
  };

  // The whole of `value` as the text of an answer.
  void WriteJsonText(MappedText& text, const Json::Value& value);

  // A member name that is a string literal, for building answers: `value["count"_key]`. jsoncpp
  // then keeps the literal's pointer instead of a copy of the name: one allocation and one free
  // less per member (an answer of /perf/stats with every table full has about 5,000).
  inline Json::StaticString operator""_key(const char* name, size_t)
  {
    return Json::StaticString(name);
  }
}
