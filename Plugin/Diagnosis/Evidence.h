// The figures a finding rests on, as plain data: a small tree of named values (units in the names),
// kept in the order the rule wrote them. A value is nothing (not measured), a yes or no, an integer
// (a count, or a signed figure), a real, a text, a list of values, or named values. It knows no
// output format: Export/DiagnosisExporter writes it out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace IngestPerf
{
  class Evidence
  {
  public:
    enum class Kind
    {
      Null,
      Bool,
      Signed,
      Unsigned,
      Real,
      Text,
      List,
      Object
    };

    Evidence() = default;  // nothing: not measured, or not in use
    Evidence(bool value);
    // Any integer type: signed or unsigned as the type is.
    template <typename Integer,
              std::enable_if_t<std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>, int> = 0>
    Evidence(Integer value) :
      kind_(std::is_signed_v<Integer> ? Kind::Signed : Kind::Unsigned),
      signed_(static_cast<int64_t>(value)),
      unsigned_(static_cast<uint64_t>(value))
    {
    }
    Evidence(double value);
    Evidence(const char* text);
    Evidence(std::string text);

    static Evidence List();    // an empty list
    static Evidence Object();  // no named value yet

    Kind GetKind() const { return kind_; }
    bool IsNull() const { return kind_ == Kind::Null; }

    // The value, or false, 0 or "" when it is of another kind.
    bool AsBool() const;
    int64_t AsSigned() const;
    uint64_t AsUnsigned() const;
    double AsReal() const;
    const std::string& AsText() const;

    // The named value, added at the end when new; nothing becomes named values first
    // (std::logic_error on any other kind).
    Evidence& operator[](const std::string& name);
    // The named value, or nothing when there is none.
    const Evidence& operator[](const std::string& name) const;
    bool Has(const std::string& name) const;

    // Adds to a list; nothing becomes an empty list first (std::logic_error on any other kind).
    void Append(Evidence value);
    // A list's element: std::out_of_range past its end (the const one gives nothing there).
    Evidence& operator[](size_t index);
    const Evidence& operator[](size_t index) const;

    // A list's elements or the named values' number; 0 for any other kind.
    size_t Size() const { return values_.size(); }
    // A list's elements, or the named values in the order written, their names in Names().
    const std::vector<Evidence>& Values() const { return values_; }
    const std::vector<std::string>& Names() const { return names_; }

  private:
    Kind kind_ = Kind::Null;
    bool bool_ = false;
    int64_t signed_ = 0;
    uint64_t unsigned_ = 0;
    double real_ = 0;
    std::string text_;
    std::vector<std::string> names_;  // an object's, one per value
    std::vector<Evidence> values_;
  };
}
