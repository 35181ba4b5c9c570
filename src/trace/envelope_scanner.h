// EnvelopeScanner: walks the top-level object of a trace around its traceEvents array, byte by
// byte, in memory bounded by a cap per value, whatever the size of the text before or after the
// array (issue 7: 1 GiB of text outside traceEvents must not be kept whole).
//
// The streaming reader feeds it every byte outside the events array. It reports each top-level
// member once its value has ended, with the value's text when the value is at most `value_cap`
// bytes (the importer then parses it with simdjson), and only its size otherwise. It checks what it
// skips only for balance (strings, brackets), not the full JSON grammar: a value too large to keep
// is reported as skipped, never used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace scaleprof::trace {

class EnvelopeScanner {
 public:
  enum class Event : uint8_t {
    kNone,         // keep feeding
    kEventsArray,  // the '[' of traceEvents (or of a bare legacy array) was just fed
    kMember,       // a top-level member ended: key(), value(), value_kept(), value_offset()
    kDocumentEnd,  // the closing '}' of the top-level object was just fed
    kSyntaxError,  // the byte just fed cannot appear here: error() says why
  };

  explicit EnvelopeScanner(size_t value_cap) : value_cap_(value_cap) {}

  // Feeds one byte found at `offset` in the JSON text. After kMember, feed the same byte again
  // when consumed() is false (a number or literal ends at the separator that follows it).
  Event feed(char c, uint64_t offset);
  bool consumed() const { return consumed_; }
  // After the events array's ']' was consumed by the caller: continue with ',' or '}' (or, for a
  // bare legacy array, nothing but white space).
  void events_array_closed() { state_ = legacy_ ? State::kDone : State::kAfterValue; }

  bool started() const { return state_ != State::kStart; }
  bool document_ended() const { return state_ == State::kDone; }
  bool legacy_array() const { return legacy_; }
  const std::string& key() const { return key_; }
  bool value_kept() const { return kept_; }
  const std::string& value() const { return value_; }
  uint64_t value_offset() const { return value_offset_; }
  uint64_t value_bytes() const { return value_bytes_; }
  const std::string& error() const { return error_; }

 private:
  enum class State : uint8_t {
    kStart,        // before the top-level value
    kExpectKey,    // after '{' or ','
    kInKey,        // inside a key string
    kExpectColon,  // after a key
    kExpectValue,  // after ':'
    kInValue,      // inside a member's value
    kAfterValue,   // expecting ',' or '}'
    kDone,         // after the closing '}'
  };
  static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  Event fail(std::string why);
  Event end_value();
  // Checks `c` as the next byte of UTF-8 text (RFC 3629: no overlong forms, surrogates or code points
  // past U+10FFFF): the envelope is held to what simdjson checks inside a window, so where a window
  // is cut never changes whether a file reads.
  bool valid_utf8_byte(unsigned char c);
  void keep(char c);

  size_t value_cap_;
  State state_ = State::kStart;
  bool legacy_ = false;
  bool consumed_ = true;
  bool first_member_ = true;
  // Within a key or value.
  bool in_string_ = false;
  bool escaped_ = false;
  int depth_ = 0;        // brackets open inside the value
  bool scalar_ = false;  // the value is a number or literal (ends at a separator)
  std::string key_;
  std::string value_;
  bool kept_ = true;
  uint64_t value_offset_ = 0;
  uint64_t value_bytes_ = 0;
  std::string error_;
  // The UTF-8 sequence in progress: continuation bytes still due, and the range the next must lie in.
  int utf8_due_ = 0;
  unsigned char utf8_lo_ = 0x80;
  unsigned char utf8_hi_ = 0xBF;
};

}  // namespace scaleprof::trace
