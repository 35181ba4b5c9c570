#include "core/utf8.h"

namespace scaleprof {

namespace {

bool in_range(unsigned char c, unsigned char lo, unsigned char hi) {
  return c >= lo && c <= hi;
}

}  // namespace

size_t utf8_sequence_length(std::string_view text, size_t pos) {
  const size_t left = text.size() - pos;
  const auto b0 = static_cast<unsigned char>(text[pos]);
  if (b0 < 0x80) return 1;
  auto at = [&](size_t i) { return static_cast<unsigned char>(text[pos + i]); };
  if (in_range(b0, 0xC2, 0xDF)) return left >= 2 && in_range(at(1), 0x80, 0xBF) ? 2 : 0;
  if (in_range(b0, 0xE0, 0xEF)) {
    if (left < 3) return 0;
    // The second byte's range excludes overlong forms (E0) and UTF-16 surrogates (ED).
    const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned char hi = b0 == 0xED ? 0x9F : 0xBF;
    return in_range(at(1), lo, hi) && in_range(at(2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in_range(b0, 0xF0, 0xF4)) {
    if (left < 4) return 0;
    // Excludes overlong forms (F0) and code points above U+10FFFF (F4).
    const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned char hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return in_range(at(1), lo, hi) && in_range(at(2), 0x80, 0xBF) && in_range(at(3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

uint32_t utf8_code_point(std::string_view text, size_t pos, size_t length) {
  const auto b0 = static_cast<unsigned char>(text[pos]);
  if (length == 1) return b0;
  static constexpr unsigned char kLeadMask[] = {0, 0, 0x1F, 0x0F, 0x07};
  uint32_t cp = b0 & kLeadMask[length];
  for (size_t i = 1; i < length; ++i) cp = (cp << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
  return cp;
}

}  // namespace scaleprof
