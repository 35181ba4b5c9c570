#include "trace/number_parse.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace scaleprof::trace {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Splits "[-]int[.frac][e[+-]exp]" into its parts; returns false if the token is not a number.
struct NumberParts {
  bool negative = false;
  std::string_view integer;
  std::string_view fraction;
  bool has_exponent = false;
};

bool split_number(std::string_view t, NumberParts* p) {
  size_t i = 0;
  if (i < t.size() && t[i] == '-') {
    p->negative = true;
    ++i;
  }
  size_t start = i;
  while (i < t.size() && is_digit(t[i])) ++i;
  p->integer = t.substr(start, i - start);
  if (p->integer.empty()) return false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    start = i;
    while (i < t.size() && is_digit(t[i])) ++i;
    p->fraction = t.substr(start, i - start);
    if (p->fraction.empty()) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    p->has_exponent = true;
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    start = i;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i == start) return false;
  }
  return i == t.size();
}

// Accumulates decimal digits into *v; false on overflow.
bool accumulate(std::string_view digits, int64_t* v) {
  for (char c : digits) {
    if (__builtin_mul_overflow(*v, 10, v) || __builtin_add_overflow(*v, c - '0', v)) return false;
  }
  return true;
}

NumberParse parse_with_exponent(std::string_view token, int64_t scale, int64_t* out) {
  // Rare form (never written by Kineto); long double keeps 64 bits of mantissa. std::from_chars, not
  // strtold: the C locale of a process that embeds the module (a notebook that called setlocale)
  // must never change what "1.5e3" reads as.
  long double v = 0;
  const char* end = token.data() + token.size();
  auto [stop, ec] = std::from_chars(token.data(), end, v);
  if (ec != std::errc() || stop != end || !std::isfinite(v)) return NumberParse::kInvalid;
  v *= static_cast<long double>(scale);
  if (v >= 9.2e18L || v <= -9.2e18L) return NumberParse::kOverflow;
  *out = std::llround(v);
  return NumberParse::kOk;
}

// The form Kineto writes, `[-]digits[.digits]` with at most 18 integer digits (which cannot
// overflow while they are accumulated; epoch times have 16), in one pass. False for anything else
// and on overflow, which the general path below then reads and reports. Every event has a ts and
// most a dur, and splitting then accumulating them was 5 % of the reader's time on
// df_index_resolver.
bool parse_plain_microseconds(std::string_view token, int64_t* ns, bool* fractional) {
  const char* p = token.data();
  const char* const end = p + token.size();
  const bool negative = p < end && *p == '-';
  if (negative) ++p;
  const char* const integer = p;
  int64_t value = 0;
  for (; p < end && is_digit(*p); ++p) {
    if (p - integer == 18) return false;  // a 19th digit could overflow: the general path checks
    value = value * 10 + (*p - '0');
  }
  if (p == integer || __builtin_mul_overflow(value, 1000, &value)) return false;
  if (p < end && *p == '.') {
    const char* const fraction = ++p;
    while (p < end && is_digit(*p)) ++p;
    const auto digits = static_cast<size_t>(p - fraction);
    if (digits == 0 || p != end) return false;
    int64_t sub = 0;
    for (size_t k = 0; k < 3; ++k) sub = sub * 10 + (k < digits ? fraction[k] - '0' : 0);
    if (digits > 3 && fraction[3] >= '5') ++sub;
    if (__builtin_add_overflow(value, sub, &value)) return false;
    *fractional = true;
  } else if (p != end) {
    return false;
  }
  *ns = negative ? -value : value;
  return true;
}

}  // namespace

NumberParse parse_microseconds_as_ns(std::string_view token, int64_t* ns, bool* fractional) {
  if (parse_plain_microseconds(token, ns, fractional)) return NumberParse::kOk;
  NumberParts p;
  if (!split_number(token, &p)) return NumberParse::kInvalid;
  if (p.has_exponent) {
    *fractional = true;
    return parse_with_exponent(token, 1000, ns);
  }
  int64_t value = 0;
  if (!accumulate(p.integer, &value)) return NumberParse::kOverflow;
  if (__builtin_mul_overflow(value, 1000, &value)) return NumberParse::kOverflow;
  if (!p.fraction.empty()) {
    *fractional = true;
    int64_t sub = 0;
    for (size_t k = 0; k < 3; ++k) sub = sub * 10 + (k < p.fraction.size() ? p.fraction[k] - '0' : 0);
    if (p.fraction.size() > 3 && p.fraction[3] >= '5') ++sub;
    if (__builtin_add_overflow(value, sub, &value)) return NumberParse::kOverflow;
  }
  *ns = p.negative ? -value : value;
  return NumberParse::kOk;
}

NumberParse parse_int64(std::string_view token, int64_t* out) {
  NumberParts p;
  if (!split_number(token, &p)) return NumberParse::kInvalid;
  if (p.has_exponent) return parse_with_exponent(token, 1, out);
  for (char c : p.fraction) {
    if (c != '0') return NumberParse::kInvalid;
  }
  int64_t value = 0;
  // Accumulate negatively so INT64_MIN parses too.
  for (char c : p.integer) {
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_sub_overflow(value, c - '0', &value)) {
      return NumberParse::kOverflow;
    }
  }
  if (!p.negative) {
    if (value == INT64_MIN) return NumberParse::kOverflow;
    value = -value;
  }
  *out = value;
  return NumberParse::kOk;
}

}  // namespace scaleprof::trace
