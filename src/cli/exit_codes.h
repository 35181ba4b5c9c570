// Exit codes every scaleprof command uses, so scripts can trust them (documented in docs/cli.md).
#pragma once

#include "core/result.h"

namespace scaleprof::cli {

inline constexpr int kExitOk = 0;       // everything read and analysed
inline constexpr int kExitError = 1;    // nothing usable: all inputs failed, or an I/O error
inline constexpr int kExitUsage = 2;    // bad command line
inline constexpr int kExitPartial = 3;  // results printed, but some input was unreadable or rejected
// report: everything was read and the tables written, but the plots could not be drawn (gnuplot
// failed). Not an input problem; input problems (3) take precedence.
inline constexpr int kExitPlotsFailed = 4;
// mlflow sync: another sync of the same root and server is running (it holds the lock); nothing was
// done. Run again later, or with --wait.
inline constexpr int kExitBusy = 5;

// The exit code of a command that stops on `kind` of error: it follows the kind, never the message's
// wording. A bad command line is 2, someone else holding the lock 5, anything else that leaves
// nothing usable 1.
constexpr int exit_code_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage:
      return kExitUsage;
    case ErrorKind::kBusy:
      return kExitBusy;
    default:
      return kExitError;
  }
}

}  // namespace scaleprof::cli
