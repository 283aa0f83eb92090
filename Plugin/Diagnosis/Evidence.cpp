#include "Diagnosis/Evidence.h"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace IngestPerf
{
  namespace
  {
    const Evidence& Nothing()
    {
      static const Evidence nothing;
      return nothing;
    }
  }


  Evidence::Evidence(bool value) :
    kind_(Kind::Bool),
    bool_(value)
  {
  }


  Evidence::Evidence(double value) :
    kind_(Kind::Real),
    real_(value)
  {
  }


  Evidence::Evidence(const char* text) :
    kind_(Kind::Text),
    text_(text)
  {
  }


  Evidence::Evidence(std::string text) :
    kind_(Kind::Text),
    text_(std::move(text))
  {
  }


  Evidence Evidence::List()
  {
    Evidence list;
    list.kind_ = Kind::List;
    return list;
  }


  Evidence Evidence::Object()
  {
    Evidence object;
    object.kind_ = Kind::Object;
    return object;
  }


  bool Evidence::AsBool() const
  {
    return kind_ == Kind::Bool && bool_;
  }


  int64_t Evidence::AsSigned() const
  {
    return kind_ == Kind::Signed ? signed_ : 0;
  }


  uint64_t Evidence::AsUnsigned() const
  {
    return kind_ == Kind::Unsigned ? unsigned_ : 0;
  }


  double Evidence::AsReal() const
  {
    return kind_ == Kind::Real ? real_ : 0;
  }


  const std::string& Evidence::AsText() const
  {
    return kind_ == Kind::Text ? text_ : Nothing().text_;
  }


  Evidence& Evidence::operator[](const std::string& name)
  {
    if (kind_ == Kind::Null)
    {
      kind_ = Kind::Object;
    }
    if (kind_ != Kind::Object)
    {
      throw std::logic_error("evidence: a value named " + name + " in a value that has no names");
    }
    const auto found = std::find(names_.begin(), names_.end(), name);
    if (found != names_.end())
    {
      return values_[static_cast<size_t>(found - names_.begin())];
    }
    names_.push_back(name);
    values_.emplace_back();
    return values_.back();
  }


  const Evidence& Evidence::operator[](const std::string& name) const
  {
    if (kind_ != Kind::Object)
    {
      return Nothing();
    }
    const auto found = std::find(names_.begin(), names_.end(), name);
    return found == names_.end() ? Nothing() : values_[static_cast<size_t>(found - names_.begin())];
  }


  bool Evidence::Has(const std::string& name) const
  {
    return kind_ == Kind::Object && std::find(names_.begin(), names_.end(), name) != names_.end();
  }


  void Evidence::Append(Evidence value)
  {
    if (kind_ == Kind::Null)
    {
      kind_ = Kind::List;
    }
    if (kind_ != Kind::List)
    {
      throw std::logic_error("evidence: an element added to a value that is not a list");
    }
    values_.push_back(std::move(value));
  }


  Evidence& Evidence::operator[](size_t index)
  {
    if (kind_ != Kind::List || index >= values_.size())
    {
      throw std::out_of_range("evidence: no element " + std::to_string(index));
    }
    return values_[index];
  }


  const Evidence& Evidence::operator[](size_t index) const
  {
    return kind_ == Kind::List && index < values_.size() ? values_[index] : Nothing();
  }
}
