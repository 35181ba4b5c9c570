// The one credential redactor: every message that can hold a URL or a server's words passes through
// it before it is returned, printed or saved, so a password, a token or a URL's user information can
// never reach a terminal, a log or a report (issue 18, finding 14).
//
// It errs on the side of removing too much: an '@' in a word is taken to end user information even
// where it was part of a path or an e-mail address, because a URL whose password holds '/', '@',
// ':' or a quote cannot be told apart from those by its shape.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace scaleprof {

// `text` (a message, a URL, a server's error body) with credentials removed:
//  - user information of every URL-like word: everything from after the scheme's slashes ("http://",
//    "HTTP:/", "htp://", "http:\\") or, where the word has no such scheme, from the word's start, up to
//    the word's LAST '@' ("http://u:p/w@host/x" -> "http://host/x", "u:p@host:5000" -> "host:5000");
//    words are separated by white space only, so quotes and brackets inside passwords do not end them;
//  - every occurrence of each non-empty string in `secrets` (the configured password or token, as is
//    and percent-encoded) -> "***"; one shorter than 6 bytes only where no letter or digit touches it
//    (a token "x" leaves "experiments" alone);
//  - the value of an Authorization header and of "Bearer <token>";
//  - the value of key=value / key: value / "key": "value" pairs whose key ends in token, password,
//    passwd, pwd, secret, apikey or api_key (any case) -> "***".
std::string redact_credentials(std::string_view text, std::span<const std::string> secrets = {});

// A string that is ONE URL as a user typed it, as messages may show it: the same redactor, with the
// whole string taken as one word (so even a password holding white space is removed).
std::string redact_url(std::string_view url);

// The user information redact_url removes from `url` ("" when none), for a client that must also
// hide it where a server echoes it.
std::string url_userinfo(std::string_view url);

}  // namespace scaleprof
