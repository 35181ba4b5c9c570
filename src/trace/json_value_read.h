// Reading single values of a Kineto trace with simdjson On-Demand: integers, floats, strings (as views
// of the JSON text where they have no escapes), raw JSON text, ts/dur tokens, and keys compared in
// place. Used by the event importer for every field of every event, so the small, hot readers are
// defined here, inline, where the importer's loop can inline them (the library is built without LTO).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "trace/number_parse.h"

namespace scaleprof::trace {

namespace od = simdjson::ondemand;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

inline std::string_view trim_token(std::string_view t) {
  while (!t.empty() && (t.back() == ' ' || t.back() == '\n' || t.back() == '\r' || t.back() == '\t')) {
    t.remove_suffix(1);
  }
  return t;
}

// The raw text of a field's key (Kineto keys have no escapes; an escaped quote still ends correctly).
inline std::string_view raw_key(od::field& field) {
  const char* p = field.key().raw();
  size_t n = 0;
  while (p[n] != '"') n += (p[n] == '\\' && p[n + 1] != '\0') ? 2 : 1;
  return {p, n};
}

// True if the raw key text at `raw` (just after the opening quote) is exactly `expected`.
template <size_t N>
bool key_is(const char* raw, const char (&expected)[N]) {
  return std::memcmp(raw, expected, N - 1) == 0 && raw[N - 1] == '"';
}

inline bool read_string(od::value& v, std::string_view* out);

// Reads a value that should hold an integer; a numeric string or an integral decimal is accepted.
inline bool read_int(od::value& v, int64_t* out) {
  // Nearly every integer is a plain number: try that first, without asking for the type. A failed
  // get_int64() leaves the value unread (On-Demand advances only on success), so the slow path
  // below sees it as before.
  if (!v.get_int64().get(*out)) return true;
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::number) {
    // simdjson's integer parser is the fast path; decimals like "7.0" fall back to the exact parser.
    if (!v.get_int64().get(*out)) return true;
    return parse_int64(trim_token(v.raw_json_token()), out) == NumberParse::kOk;
  }
  if (type == od::json_type::string) {
    std::string_view s;
    if (!read_string(v, &s)) return false;
    return parse_int64(s, out) == NumberParse::kOk;
  }
  return false;
}

// Reads a float; strings such as "N/A" or "inf" give NaN or infinity instead of failing.
inline bool read_double(od::value& v, double* out) {
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::number) return !v.get_double().get(*out);
  if (type == od::json_type::string) {
    std::string_view s;
    if (!read_string(v, &s)) return false;
    if (s == "inf" || s == "Infinity") {
      *out = std::numeric_limits<double>::infinity();
    } else {
      *out = kNaN;
    }
    return true;
  }
  return false;
}

// A string without escapes (nearly every string in a Kineto trace) is returned as a view of the JSON
// text itself, valid while its window is: simdjson would otherwise copy it byte by byte into its
// string buffer (the header-inlined On-Demand code is built for the generic target, see
// docs/architecture.md), and that buffer's pages count in the peak memory. Stage 1 has already
// checked the text (UTF-8, no raw control characters), so the view holds exactly what get_string()
// would return. A string with a backslash is unescaped by simdjson as before.
inline bool read_string(od::value& v, std::string_view* out) {
  od::json_type type;
  if (v.type().get(type) || type != od::json_type::string) return false;
  // The token runs from the opening quote to the next structural character: the string, then any
  // white space before the ',' or '}'.
  const std::string_view token = trim_token(v.raw_json_token());
  if (token.size() >= 2 && token.back() == '"' && std::memchr(token.data() + 1, '\\', token.size() - 2) == nullptr) {
    *out = token.substr(1, token.size() - 2);
    return true;
  }
  return !v.get_string().get(*out);
}

// Raw JSON text of an array/object/scalar value (for shapes and process-group ranks).
inline bool read_raw(od::value& v, std::string_view* out) {
  od::json_type type;
  if (v.type().get(type)) return false;
  if (type == od::json_type::string) return read_string(v, out);
  return !simdjson::to_json_string(v).get(*out);
}

// A ts or dur: the number's text, parsed exactly later (a double would lose digits), or a quoted
// number as some exporters write; *bad when it is neither.
inline simdjson::error_code read_time_token(od::value& v, std::string_view* token, bool* bad) {
  od::json_type type;
  if (auto e = v.type().get(type)) return e;
  bool is_number = type == od::json_type::number;
  *token = {};
  if (is_number) {
    *token = trim_token(v.raw_json_token());
  } else if (type == od::json_type::string) {
    is_number = read_string(v, token);
  }
  *bad = !is_number;
  return simdjson::SUCCESS;
}

inline bool read_triple(od::value& v, int64_t out[3]) {
  od::array arr;
  if (v.get_array().get(arr)) return false;
  int k = 0;
  for (auto element : arr) {
    od::value item;
    if (std::move(element).get(item)) return false;
    if (k < 3 && !read_int(item, &out[k])) return false;
    ++k;
  }
  return true;
}

// True if `text` (trailing white space allowed) is exactly one JSON value: an object or array by
// bracket balance, strings and escapes respected; a scalar always (windows are cut at a ',' or just
// after the array's ']', outside strings: never inside a scalar token).
inline bool whole_value(std::string_view text) {
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == '\r' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  if (text.empty()) return false;
  if (text.front() != '{' && text.front() != '[') return true;
  if (text.back() != '}' && text.back() != ']') return false;
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1 == text.size();
    }
  }
  return false;
}

}  // namespace scaleprof::trace
