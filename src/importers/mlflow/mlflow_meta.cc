#include "importers/mlflow/mlflow_meta.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "core/number_text.h"
#include "core/time_bounds.h"

namespace scaleprof::importers {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// One YAML scalar; false on an unterminated quote.
bool unquote(std::string_view v, std::string* out) {
  out->clear();
  if (v.empty()) return true;
  if (v.front() == '\'') {
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] == '\'') {
        if (i + 1 < v.size() && v[i + 1] == '\'') {
          *out += '\'';
          ++i;
          continue;
        }
        return true;
      }
      *out += v[i];
    }
    return false;
  }
  if (v.front() == '"') {
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] == '"') return true;
      if (v[i] == '\\' && i + 1 < v.size()) {
        const char e = v[++i];
        *out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
        continue;
      }
      *out += v[i];
    }
    return false;
  }
  *out = std::string(v);
  return true;
}

}  // namespace

Result<std::map<std::string, std::string>> parse_mlflow_meta(std::string_view text, const std::string& path) {
  std::map<std::string, std::string> out;
  int64_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line.front() == ' ' || line.front() == '-' || line.front() == '#') continue;
    const size_t colon = line.find(": ");
    const bool bare = colon == std::string_view::npos && line.ends_with(":");
    if (colon == std::string_view::npos && !bare) continue;
    const std::string_view key = trim(line.substr(0, bare ? line.size() - 1 : colon));
    const std::string_view value = bare ? std::string_view() : trim(line.substr(colon + 2));
    if (key.empty() || value == "[]" || value == "{}") continue;
    std::string scalar;
    if (!unquote(value, &scalar)) {
      return Error{fmt::format("{}:{}: unterminated quoted value of '{}'", path, line_no, key)};
    }
    out[std::string(key)] = std::move(scalar);
  }
  return out;
}

bool metric_timestamp_in_bounds(int64_t timestamp_ms) {
  return timestamp_ms >= kMinTimeNs / 1000000 && timestamp_ms <= kMaxTimeNs / 1000000;
}

Result<MetricFile> parse_mlflow_metric_file(std::string_view text, const std::string& path, size_t max_points) {
  MetricFile out;
  int64_t line_no = 0;
  int64_t skipped = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty()) continue;
    std::string_view fields[3];
    size_t n = 0;
    size_t start = 0;
    while (start < line.size() && n < 4) {
      while (start < line.size() && line[start] == ' ') ++start;
      if (start >= line.size()) break;
      size_t end = line.find(' ', start);
      if (end == std::string_view::npos) end = line.size();
      if (n == 3) {
        n = 4;
        break;
      }
      fields[n++] = line.substr(start, end - start);
      start = end;
    }
    MetricPoint p;
    const char* why = nullptr;
    if (n < 2 || n > 3 || !parse_int64(fields[0], &p.timestamp_ms, kStrictNumber) ||
        !parse_double(fields[1], &p.value, kStrictNumber) ||
        (n == 3 && !parse_int64(fields[2], &p.step, kStrictNumber))) {
      why = "expected 'timestamp value step'";
    } else if (!metric_timestamp_in_bounds(p.timestamp_ms)) {
      why = "timestamp out of range";
    }
    if (why != nullptr) {
      if (++skipped <= static_cast<int64_t>(kProblemsPerItem)) {
        out.problems.push_back(fmt::format("{}:{}: {}; line skipped", path, line_no, why));
      }
      continue;
    }
    if (out.points.size() >= max_points) {
      return Error{fmt::format("{}: more than {} points; metric not read", path, max_points), ErrorKind::kTooLarge};
    }
    out.points.push_back(p);
  }
  if (skipped > static_cast<int64_t>(kProblemsPerItem)) {
    out.problems.push_back(
        fmt::format("{}: {} more malformed line(s) skipped", path, skipped - static_cast<int64_t>(kProblemsPerItem)));
  }
  return out;
}

}  // namespace scaleprof::importers
