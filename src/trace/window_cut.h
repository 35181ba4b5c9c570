// Where the streaming reader may cut the traceEvents array into windows, found from the JSON's
// structure (strings and brackets), whatever its layout: one event over several lines, one per
// line, every value on a line of its own, or the whole array on one line (issue 18: cutting at line
// breaks only held files without them whole, and made the parallel reader's cuts depend on how
// events were laid out).
//
// The text must start between two elements of the array (at an element, or at white space before
// one), outside every string. Strings are found as simdjson's stage 1 finds them: a '"' preceded by
// an odd run of backslashes is escaped, wherever it is, so a cut this finds outside a string is
// outside one for the parser too, valid JSON or not.
#pragma once

#include <cstddef>
#include <string_view>

namespace scaleprof::trace {

struct WindowCut {
  // Index of the last ',' between two elements of the array, before the array's closing bracket
  // (if the text holds it); 0 when there is none. `text[0, element_end)` is whole elements.
  size_t element_end = 0;
  // The array's closing bracket is in the text (at `array_close`), or the brackets do not balance.
  bool array_closed = false;
  size_t array_close = 0;
};

WindowCut find_window_cut(std::string_view text);

}  // namespace scaleprof::trace
