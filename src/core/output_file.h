// The one output-file writer: every file a command writes for the user (-o FILE, --html FILE, plot
// files, CSV/JSON output) and standard output go through it. docs/cli.md, "Output files", states the
// guarantees; tests/output_file_test.cc proves them.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace scaleprof {

// Writes `text` to `path`; "" or "-" means standard output.
//  - A regular file (or a missing one) is replaced atomically: `text` goes into a temporary file
//    created exclusively (O_CREAT|O_EXCL|O_NOFOLLOW, random name, hidden, in the same folder), every
//    write and the close are checked, the data is synced, and only then is it renamed over `path`.
//    A reader or a crash sees the old file or the new one, never half. A replaced file keeps its
//    permission bits. A file planted at a guessable name (e.g. FILE.tmp) is never opened or followed.
//  - A character device, pipe or socket (-o /dev/null, -o /dev/stdout, a FIFO) is written straight
//    through: it is never replaced by a regular file.
//  - A symlink is followed to its final target, which is then treated as above: a regular target is
//    replaced atomically in the target's own folder (the link stays a link); a missing target
//    (a dangling link) is refused with an error, so a planted link cannot create files elsewhere.
//  - A folder, or anything else, is refused with an error naming `path`.
//  - A write past a file-size limit (`ulimit -f`) is an error naming `path` ("File too large"),
//    never the end of the process by SIGXFSZ (core/file_size_signal.h); the same holds for
//    write_stream below.
Status write_output_file(const std::string& path, std::string_view text);

// Takes the output one piece at a time. A failed write is remembered by the writer and returned
// once at the end, so a producer never checks; pieces after a failure are dropped.
using TextSink = std::function<void(std::string_view)>;

// The same, with the text produced piece by piece by `produce` (a large table row by row) and
// written as it comes, so it never needs to be held whole. Same guarantees: a regular file is still
// replaced atomically (the pieces go into the temporary file, renamed only when all are written).
Status write_output_file(const std::string& path, const std::function<void(const TextSink&)>& produce);

// Writes all of `text` to `stream` and flushes it; an error (a full disk, /dev/full, a closed pipe)
// is returned as "<what>: cannot write: <reason>".
Status write_stream(FILE* stream, std::string_view text, std::string_view what);

// Flushes standard output (C stdio and std::cout) and reports whether anything written to it since
// the start failed. Every command calls it before exiting, so `scaleprof ... > /dev/full` fails.
Status finish_stdout();

}  // namespace scaleprof
