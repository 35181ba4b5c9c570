// How a library function that runs a whole command tells the user what happens, without knowing
// where it is shown: one message at a time, in order, with a label ("error", "warning", "note",
// "sync", or "" for a line of its own). The CLI prints each on standard error (print_message); the
// Python module keeps them. Output meant for standard output goes through a TextSink
// (core/output_file.h) instead.
#pragma once

#include <functional>
#include <string_view>

namespace scaleprof {

using MessageSink = std::function<void(std::string_view label, std::string_view text)>;

}  // namespace scaleprof
