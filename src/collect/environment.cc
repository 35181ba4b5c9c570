#include "collect/environment.h"

#include <unistd.h>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX leaves it undeclared

namespace scaleprof::collect {

Environment Environment::from_process() {
  Environment env;
  for (char** p = environ; p != nullptr && *p != nullptr; ++p) {
    std::string_view entry(*p);
    size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.vars_.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  return env;
}

std::optional<std::string> Environment::get(std::string_view name) const {
  auto it = vars_.find(name);
  if (it == vars_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> Environment::non_empty(std::string_view name) const {
  auto v = get(name);
  if (!v || v->empty()) return std::nullopt;
  return v;
}

std::vector<std::string> Environment::to_strings() const {
  std::vector<std::string> out;
  out.reserve(vars_.size());
  for (const auto& [k, v] : vars_) {
    std::string entry = k;
    entry += '=';
    entry += v;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace scaleprof::collect
