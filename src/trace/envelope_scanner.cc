#include "trace/envelope_scanner.h"

#include <utility>

namespace scaleprof::trace {

namespace {
// Longer keys are kept truncated: no key the reader knows is this long.
constexpr size_t kKeyCap = 256;
}  // namespace

EnvelopeScanner::Event EnvelopeScanner::fail(std::string why) {
  error_ = std::move(why);
  return Event::kSyntaxError;
}

void EnvelopeScanner::keep(char c) {
  ++value_bytes_;
  if (!kept_) return;
  if (value_.size() < value_cap_) {
    value_.push_back(c);
    return;
  }
  kept_ = false;
  std::string().swap(value_);
}

EnvelopeScanner::Event EnvelopeScanner::end_value() {
  state_ = State::kAfterValue;
  return Event::kMember;
}

bool EnvelopeScanner::valid_utf8_byte(unsigned char c) {
  if (utf8_due_ > 0) {
    if (c < utf8_lo_ || c > utf8_hi_) return false;
    --utf8_due_;
    utf8_lo_ = 0x80;
    utf8_hi_ = 0xBF;
    return true;
  }
  if (c < 0x80) return true;
  if (c >= 0xC2 && c <= 0xDF) {
    utf8_due_ = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    utf8_due_ = 2;
    if (c == 0xE0) utf8_lo_ = 0xA0;  // no overlong forms
    if (c == 0xED) utf8_hi_ = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    utf8_due_ = 3;
    if (c == 0xF0) utf8_lo_ = 0x90;  // no overlong forms
    if (c == 0xF4) utf8_hi_ = 0x8F;  // nothing past U+10FFFF
  } else {
    return false;
  }
  return true;
}

EnvelopeScanner::Event EnvelopeScanner::feed(char c, uint64_t offset) {
  consumed_ = true;
  if (!valid_utf8_byte(static_cast<unsigned char>(c))) return fail("invalid UTF-8");
  // Inside a string, JSON wants every control character escaped (simdjson's stage 1 rejects them).
  const bool in_a_string = state_ == State::kInKey || (state_ == State::kInValue && in_string_);
  if (in_a_string && static_cast<unsigned char>(c) < 0x20) {
    return fail("invalid JSON: unescaped control character in a string");
  }
  switch (state_) {
    case State::kStart:
      if (is_space(c)) return Event::kNone;
      if (c == '[') {
        legacy_ = true;
        state_ = State::kInValue;
        return Event::kEventsArray;
      }
      if (c != '{') return fail("the trace is neither a JSON object nor an array");
      state_ = State::kExpectKey;
      return Event::kNone;
    case State::kExpectKey:
      if (is_space(c)) return Event::kNone;
      if (c == '"') {
        state_ = State::kInKey;
        key_.clear();
        escaped_ = false;
        return Event::kNone;
      }
      if (c == '}' && first_member_) {
        state_ = State::kDone;
        return Event::kDocumentEnd;
      }
      return fail("invalid JSON: expected a key in the top-level object");
    case State::kInKey:
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        state_ = State::kExpectColon;
        return Event::kNone;
      }
      if (key_.size() < kKeyCap) key_.push_back(c);
      return Event::kNone;
    case State::kExpectColon:
      if (is_space(c)) return Event::kNone;
      if (c != ':') return fail("invalid JSON: expected ':' after a key");
      state_ = State::kExpectValue;
      return Event::kNone;
    case State::kExpectValue:
      if (is_space(c)) return Event::kNone;
      if (c == ',' || c == '}' || c == ']' || c == ':') return fail("invalid JSON: expected a value");
      if (c == '[' && key_ == "traceEvents") {
        state_ = State::kInValue;
        return Event::kEventsArray;
      }
      std::string().swap(value_);
      kept_ = true;
      value_offset_ = offset;
      value_bytes_ = 0;
      in_string_ = c == '"';
      escaped_ = false;
      depth_ = (c == '{' || c == '[') ? 1 : 0;
      scalar_ = !in_string_ && depth_ == 0;
      keep(c);
      state_ = State::kInValue;
      return Event::kNone;
    case State::kInValue:
      if (scalar_) {
        if (c == ',' || c == '}' || c == ']' || is_space(c)) {
          consumed_ = false;
          return end_value();
        }
        keep(c);
        return Event::kNone;
      }
      keep(c);
      if (in_string_) {
        if (escaped_) {
          escaped_ = false;
        } else if (c == '\\') {
          escaped_ = true;
        } else if (c == '"') {
          in_string_ = false;
          if (depth_ == 0) return end_value();
        }
        return Event::kNone;
      }
      if (c == '"') {
        in_string_ = true;
      } else if (c == '{' || c == '[') {
        ++depth_;
      } else if (c == '}' || c == ']') {
        if (--depth_ == 0) return end_value();
      }
      return Event::kNone;
    case State::kAfterValue:
      if (is_space(c)) return Event::kNone;
      if (c == ',') {
        first_member_ = false;
        state_ = State::kExpectKey;
        return Event::kNone;
      }
      if (c == '}') {
        state_ = State::kDone;
        return Event::kDocumentEnd;
      }
      return fail("invalid JSON: expected ',' or '}' after a value in the top-level object");
    case State::kDone:
      if (is_space(c)) return Event::kNone;
      return fail("unexpected content after the end of the JSON document");
  }
  return Event::kNone;
}

}  // namespace scaleprof::trace
