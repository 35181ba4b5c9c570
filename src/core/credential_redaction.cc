#include "core/credential_redaction.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

namespace scaleprof {

namespace {

constexpr std::string_view kHidden = "***";

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}
bool is_alpha(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0;
}
bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}
char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Where the user information of a URL-like word would begin: after the first "scheme:" followed by
// at least one '/' or '\' ("http://", "HTTP:/", "htp:\\"), or at the word's start when it has none
// ("user:pass@host", "http:user:pass@host"). The scheme must start the word or follow a character
// that cannot be part of user information's first field (quote, bracket, '='), so a password
// holding ":/" is not taken for one.
size_t userinfo_start(std::string_view word, size_t at) {
  for (size_t p = 0; p < at; ++p) {
    if (!is_alpha(word[p])) continue;
    if (p > 0 && (is_scheme_char(word[p - 1]) || word[p - 1] == ':' || word[p - 1] == '%' || word[p - 1] == '@')) {
      continue;
    }
    size_t q = p;
    while (q < at && is_scheme_char(word[q])) ++q;
    if (q >= at || word[q] != ':') continue;
    size_t slash = q + 1;
    while (slash < at && (word[slash] == '/' || word[slash] == '\\')) ++slash;
    if (slash > q + 1) return slash;
    break;  // the first "name:" without slashes is user information, not a scheme
  }
  // No scheme: keep only the quotes and brackets that open the word.
  size_t i = 0;
  while (i < at && std::string_view("\"'`([{<=").find(word[i]) != std::string_view::npos) ++i;
  return i;
}

// One word with its user information removed: up to its last '@'.
std::string strip_userinfo(std::string_view word) {
  const size_t at = word.rfind('@');
  if (at == std::string_view::npos) return std::string(word);
  const size_t start = userinfo_start(word, at);
  return std::string(word.substr(0, start)) + std::string(word.substr(at + 1));
}

std::string percent_encoded(std::string_view text) {
  static constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0 || c == '-' || c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
  return out;
}

// Every occurrence of `secret` -> "***". A short secret (under 6 bytes) only where it stands alone,
// not inside a longer word: a token "x" must not turn "experiments" into "e***periments".
std::string replace_all(std::string_view text, std::string_view secret) {
  const bool whole_words_only = secret.size() < 6;
  const auto alnum_at = [&](size_t i) { return std::isalnum(static_cast<unsigned char>(text[i])) != 0; };
  std::string out;
  size_t from = 0;
  for (size_t hit = text.find(secret); hit != std::string_view::npos; hit = text.find(secret, hit + 1)) {
    if (hit < from) continue;
    const size_t end = hit + secret.size();
    if (whole_words_only && ((hit > 0 && alnum_at(hit - 1)) || (end < text.size() && alnum_at(end)))) continue;
    out.append(text.substr(from, hit - from));
    out.append(kHidden);
    from = end;
  }
  out.append(text.substr(from));
  return out;
}

bool ends_with_ci(std::string_view key, std::string_view suffix) {
  if (key.size() < suffix.size()) return false;
  const std::string_view tail = key.substr(key.size() - suffix.size());
  return std::equal(tail.begin(), tail.end(), suffix.begin(), [](char a, char b) { return lower(a) == b; });
}

bool is_key_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
}

// The end of a value that starts at `begin`: the closing quote when it is quoted, the end of the
// line for an Authorization header (its value holds a space: "Bearer abc"), else the first
// separator.
size_t value_end(std::string_view text, size_t begin, char quote, bool to_end_of_line) {
  size_t e = begin;
  while (e < text.size()) {
    const char c = text[e];
    if (quote != 0) {
      if (c == quote || c == '\n') break;
    } else if (to_end_of_line) {
      if (c == '\n' || c == '\r' || c == '"' || c == '\'' || c == ',' || c == ';') break;
    } else if (is_space(c) || std::string_view("&,;})]\"'<>").find(c) != std::string_view::npos) {
      break;
    }
    ++e;
  }
  return e;
}

// The ranges of secret values after "key=", "key: ", "\"key\": \"" for secret-looking keys, and
// after "Bearer ".
std::vector<std::pair<size_t, size_t>> secret_values(std::string_view text) {
  static constexpr std::array<std::string_view, 7> kSecretKeys = {"token",  "password", "passwd", "pwd",
                                                                  "secret", "apikey",   "api_key"};
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t pos = 0; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (c != '=' && c != ':') continue;
    size_t k = pos;
    while (k > 0 && text[k - 1] == ' ') --k;
    if (k > 0 && (text[k - 1] == '"' || text[k - 1] == '\'')) --k;
    size_t key_begin = k;
    while (key_begin > 0 && is_key_char(text[key_begin - 1])) --key_begin;
    const std::string_view key = text.substr(key_begin, k - key_begin);
    if (key.empty()) continue;
    const bool header = ends_with_ci(key, "authorization");
    bool secret = header;
    for (std::string_view suffix : kSecretKeys) secret = secret || ends_with_ci(key, suffix);
    if (!secret) continue;
    size_t v = pos + 1;
    while (v < text.size() && text[v] == ' ') ++v;
    char quote = 0;
    if (v < text.size() && (text[v] == '"' || text[v] == '\'')) quote = text[v++];
    const size_t e = value_end(text, v, quote, header);
    if (e > v) ranges.emplace_back(v, e);
    pos = std::max(pos, e == 0 ? 0 : e - 1);
  }
  // "Bearer <token>" wherever it stands (an echoed header line without its name).
  for (size_t pos = 0; pos + 7 < text.size(); ++pos) {
    if (pos > 0 && is_key_char(text[pos - 1])) continue;
    if (!ends_with_ci(text.substr(pos, 6), "bearer") || text[pos + 6] != ' ') continue;
    size_t v = pos + 6;
    while (v < text.size() && text[v] == ' ') ++v;
    const size_t e = value_end(text, v, 0, false);
    if (e > v) ranges.emplace_back(v, e);
  }
  return ranges;
}

std::string hide_ranges(std::string_view text, std::vector<std::pair<size_t, size_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::string out;
  size_t from = 0;
  for (const auto& [begin, end] : ranges) {
    if (end <= from) continue;
    const size_t b = std::max(begin, from);
    out.append(text.substr(from, b - from));
    if (b == begin) out.append(kHidden);
    from = end;
  }
  out.append(text.substr(from));
  return out;
}

std::string redact(std::string_view text, std::span<const std::string> secrets, bool one_word) {
  std::string current(text);
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    current = replace_all(current, secret);
    const std::string encoded = percent_encoded(secret);
    if (encoded != secret) current = replace_all(current, encoded);
  }
  std::string stripped;
  if (one_word) {
    stripped = strip_userinfo(current);
  } else {
    size_t i = 0;
    while (i < current.size()) {
      const size_t word_end =
          std::find_if(current.begin() + static_cast<std::ptrdiff_t>(i), current.end(), is_space) - current.begin();
      stripped += strip_userinfo(std::string_view(current).substr(i, word_end - i));
      size_t next = word_end;
      while (next < current.size() && is_space(current[next])) ++next;
      stripped.append(current, word_end, next - word_end);
      i = next;
    }
  }
  return hide_ranges(stripped, secret_values(stripped));
}

}  // namespace

std::string redact_credentials(std::string_view text, std::span<const std::string> secrets) {
  return redact(text, secrets, false);
}

std::string redact_url(std::string_view url) {
  return redact(url, {}, true);
}

std::string url_userinfo(std::string_view url) {
  const size_t at = url.rfind('@');
  if (at == std::string_view::npos) return {};
  const size_t start = userinfo_start(url, at);
  return std::string(url.substr(start, at - start));
}

}  // namespace scaleprof
