// A snapshot of environment variables, passed explicitly so detection is testable and thread safe
// (getenv races with setenv; a snapshot taken once does not).
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace scaleprof::collect {

class Environment {
 public:
  Environment() = default;
  Environment(std::initializer_list<std::pair<const std::string, std::string>> vars) : vars_(vars) {}

  // The variables of this process, read once.
  static Environment from_process();

  // The value, or nullopt when unset. Set-but-empty is a value ("").
  std::optional<std::string> get(std::string_view name) const;
  // The value when set and not empty.
  std::optional<std::string> non_empty(std::string_view name) const;
  void set(const std::string& name, const std::string& value) { vars_[name] = value; }
  void unset(const std::string& name) { vars_.erase(name); }

  // "NAME=value" strings for execve.
  std::vector<std::string> to_strings() const;

 private:
  std::map<std::string, std::string, std::less<>> vars_;
};

}  // namespace scaleprof::collect
