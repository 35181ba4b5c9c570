// Result<T>: a value or a one-line error, returned across library boundaries.
//
// The library throws nothing at its public surface; callers test `ok()` and read either `value()` or
// `error()`. Messages are complete sentences for a user ("trace.json:1234: dur is negative"), so the
// CLI prints them unchanged.
//
// An error also says what kind of problem it is (ErrorKind), so that a caller decides by the kind,
// never by the wording: the CLI's exit code follows the kind (cli/exit_codes.h, exit_code_for).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace scaleprof {

// What went wrong, for callers that act on it (an exit code, a retry); the message says it to a user.
enum class ErrorKind {
  kBadInput,  // the input is there but wrong: unparsable, out of range, contradictory (the most common)
  kUsage,     // the command line (an option's value) is wrong
  kNotFound,  // a file, folder, run or experiment named is not there
  kIo,        // opening, reading or writing failed: permissions, a full disk
  kRefused,   // not read on purpose: a symbolic link where links are not followed, not a regular file
  kTooLarge,  // past a limit a reader keeps to: a file larger than such a file may be
  kNetwork,   // a server could not be reached or answered with an error
  kBusy,      // someone else holds what is needed (a lock); trying later may work
  kInternal,  // a bug or an exhausted resource, not the user's input
};

struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kBadInput;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : state_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  T&& value() && { return std::get<T>(std::move(state_)); }
  const Error& error() const { return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

// For operations that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace scaleprof
