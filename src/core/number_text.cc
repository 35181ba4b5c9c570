#include "core/number_text.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace scaleprof {

namespace {

constexpr double kMaxIntegralFloat = 9e15;

// The text left once the syntax's blanks and sign are taken off; nullopt when a '+' is not followed
// by the number itself.
std::optional<std::string_view> number_body(std::string_view text, NumberSyntax syntax) {
  if (syntax.blanks_around) text = trim_blanks(text);
  if (syntax.plus_sign && !text.empty() && text.front() == '+') {
    text.remove_prefix(1);
    if (text.empty() || text.front() == '-' || text.front() == '+') return std::nullopt;
  }
  return text;
}

// The whole of `body` as a T (std::from_chars), or nothing.
template <class T>
std::optional<T> whole_number(std::string_view body) {
  T value{};
  const char* end = body.data() + body.size();
  const auto [ptr, ec] = std::from_chars(body.data(), end, value);
  if (body.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

// The number at the front of `text` as a T and what follows it, or nothing.
template <class T>
std::optional<NumberPrefix<T>> leading_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc()) return std::nullopt;
  return NumberPrefix<T>{value, std::string_view(ptr, static_cast<size_t>(end - ptr))};
}

}  // namespace

std::optional<NumberPrefix<double>> parse_double_prefix(std::string_view text) {
  return leading_number<double>(text);
}

std::optional<NumberPrefix<int64_t>> parse_int64_prefix(std::string_view text) {
  return leading_number<int64_t>(text);
}

std::optional<uint64_t> parse_hex(std::string_view text) {
  uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, 16);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

std::optional<double> parse_double(std::string_view text, NumberSyntax syntax) {
  const std::optional<std::string_view> body = number_body(text, syntax);
  const std::optional<double> value = body ? whole_number<double>(*body) : std::nullopt;
  if (!value || (!syntax.non_finite && !std::isfinite(*value))) return std::nullopt;
  return value;
}

std::optional<int64_t> parse_int64(std::string_view text, NumberSyntax syntax) {
  const std::optional<std::string_view> body = number_body(text, syntax);
  if (!body) return std::nullopt;
  if (const std::optional<int64_t> value = whole_number<int64_t>(*body)) return value;
  if (!syntax.integral_float) return std::nullopt;
  const std::optional<double> d = whole_number<double>(*body);
  if (!d || *d != std::floor(*d) || std::abs(*d) >= kMaxIntegralFloat) return std::nullopt;
  return static_cast<int64_t>(*d);
}

bool parse_double(std::string_view text, double* out, NumberSyntax syntax) {
  const std::optional<double> value = parse_double(text, syntax);
  if (value) *out = *value;
  return value.has_value();
}

bool parse_int64(std::string_view text, int64_t* out, NumberSyntax syntax) {
  const std::optional<int64_t> value = parse_int64(text, syntax);
  if (value) *out = *value;
  return value.has_value();
}

}  // namespace scaleprof
