// The one terminal sanitiser: every string from input (names, paths, messages quoting them) passes
// through it before it reaches a terminal, so data can never drive the terminal.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace scaleprof {

// `text` with everything that could control a terminal made visible:
//   line feed, carriage return, tab       -> \n  \r  \t   (a name can never fake a second "error:" line)
//   other C0 controls, DEL, C1 controls   -> \u001b, \u007f, \u009b   (escape sequences, OSC 52, CSI)
//   bidirectional overrides and isolates  -> \u202e ...   (text that displays in another order)
//   bytes that are not valid UTF-8        -> \xff
// Printable ASCII and other valid UTF-8 pass unchanged.
std::string terminal_safe(std::string_view text);

// Writes "<prefix>: <terminal_safe(text)>\n" to `stream` (prefix "" writes the text alone), e.g.
// print_message(stderr, "error", message).
void print_message(FILE* stream, std::string_view prefix, std::string_view text);

}  // namespace scaleprof
