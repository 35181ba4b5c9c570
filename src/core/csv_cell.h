// The one CSV cell writer: every text cell scaleprof writes to CSV goes through it.
#pragma once

#include <string>
#include <string_view>

namespace scaleprof {

// `text` as one CSV field (RFC 4180): quoted when it holds a comma, quote or line break, with quotes
// doubled. A cell that a spreadsheet would read as a formula (first character = + - @, tab or
// carriage return) gets a leading single quote, as OWASP recommends against CSV injection; a cell
// that is a plain decimal number ("-3.5", "+2", "1e-3") is left as it is, so numbers stay numbers.
std::string csv_cell(std::string_view text);

// True for a plain decimal number: optional sign, digits with at most one point, optional exponent.
bool is_plain_number(std::string_view text);

}  // namespace scaleprof
