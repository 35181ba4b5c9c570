// Result<T>: a value or a one-line error, returned across library boundaries.
//
// The library throws nothing at its public surface; callers test `ok()` and read either `value()` or
// `error()`. Messages are complete sentences for a user ("trace.json:1234: dur is negative"), so the
// CLI prints them unchanged.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace scaleprof {

struct Error {
  std::string message;
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
