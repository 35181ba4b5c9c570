// The one parser of numbers written as text (CSV cells, MLflow params and metric files, run
// directories): every reader turns text into a number through it, so "what a number looks like" has
// one answer, with the few choices a format really needs named in NumberSyntax.
//
// The number is the whole text, read by std::from_chars (never the locale, never a prefix such as
// "12abc"). A value out of the type's range ("1e999", "99999999999999999999") is no number, never a
// clamped or infinite one.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace scaleprof {

struct NumberSyntax {
  // Spaces and tabs before and after the number are ignored (cells written by hand or by pandas).
  bool blanks_around = false;
  // One leading '+' before the digits is accepted ("+2"; never "+-2" or "++2").
  bool plus_sign = false;
  // "nan", "inf", "infinity" (any case, '-' allowed before the last two) are values. Off: only finite
  // numbers are.
  bool non_finite = true;
  // For integers: a number written as a float with an integral value ("4.0", "4e0": pandas writes
  // integer columns with missing values as floats) is that integer, up to 9e15 in magnitude (where
  // every integer is still exact in a double).
  bool integral_float = false;
};

// The rules of text scaleprof itself writes (run directories, MLflow's own files): nothing around the
// number, no '+', nan and inf accepted as values, integers as digits only.
inline constexpr NumberSyntax kStrictNumber{};
// The rules of CSV cells from other programs (itwinai's CSV files, its profiling averages): blanks
// around ignored, '+' accepted, finite numbers only, integers also as integral floats.
inline constexpr NumberSyntax kCellNumber{true, true, false, true};

std::optional<double> parse_double(std::string_view text, NumberSyntax syntax = kStrictNumber);
std::optional<int64_t> parse_int64(std::string_view text, NumberSyntax syntax = kStrictNumber);

// The same into *out, which is left as it was when the text is no number; for a row's chain of
// checks (`if (!parse_int64(a, &x, kCellNumber) || ...)`).
bool parse_double(std::string_view text, double* out, NumberSyntax syntax);
bool parse_int64(std::string_view text, int64_t* out, NumberSyntax syntax);

// A number at the front of a longer text (an interval with its unit, "500ms"; SLURM's "4(x2)"; a token
// of an expression): the value and the text after it, or nothing when the text does not start with a
// number (no blanks or '+' before it; nan and inf are values, as std::from_chars reads them). The
// caller decides what may follow.
template <class T>
struct NumberPrefix {
  T value{};
  std::string_view rest;
};
std::optional<NumberPrefix<double>> parse_double_prefix(std::string_view text);
std::optional<NumberPrefix<int64_t>> parse_int64_prefix(std::string_view text);

// The whole text as hexadecimal digits (no "0x", no sign): bit masks, percent escapes.
std::optional<uint64_t> parse_hex(std::string_view text);

// `text` without the spaces and tabs at either end (the blank rule of NumberSyntax::blanks_around).
std::string_view trim_blanks(std::string_view text);

}  // namespace scaleprof
