#include "launch/shell_text.h"

#include <fmt/format.h>

#include "launch/slurm_script.h"

namespace scaleprof::launch {

namespace {

// How bash reads one character: its quoting, and whether it is at the top level of the command
// (outside quotes and outside $(...), `...` and ${...}).
struct CharContext {
  Quoting quoting = Quoting::kNone;
  bool top = true;
  bool escaped = false;  // after a backslash: literal
};

// One open construct while reading: a quote, a substitution or the command itself.
struct Frame {
  char kind;  // 'T' the command, '\'' single quotes, 'a' $'...', '"' double quotes, '(' $(...), '`', '{' ${...}
  size_t start = 0;
  int depth = 0;  // nested ( in $(...), { in ${...}
};

std::string unclosed(const Frame& f) {
  const char* what = f.kind == '\''  ? "'"
                     : f.kind == 'a' ? "$'"
                     : f.kind == '"' ? "\""
                     : f.kind == '(' ? "$("
                     : f.kind == '`' ? "`"
                                     : "${";
  return fmt::format("unclosed {} at character {}", what, f.start + 1);
}

Result<std::vector<CharContext>> read_shell(std::string_view s) {
  std::vector<CharContext> out(s.size());
  std::vector<Frame> stack{{'T', 0, 0}};
  auto mark = [&](size_t i) {
    const char k = stack.back().kind;
    out[i].quoting = (k == '\'' || k == 'a') ? Quoting::kSingle : k == '"' ? Quoting::kDouble : Quoting::kNone;
    out[i].top = stack.size() == 1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    mark(i);
    Frame& f = stack.back();
    const char c = s[i];
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (f.kind == '\'') {
      if (c == '\'') stack.pop_back();
      continue;
    }
    if (f.kind == 'a') {  // $'...': a backslash escapes the next character, \' included
      if (c == '\\' && i + 1 < s.size()) {
        mark(++i);
        out[i].escaped = true;
      } else if (c == '\'') {
        stack.pop_back();
      }
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= s.size()) return Error{std::string("trailing backslash")};
      mark(++i);
      out[i].escaped = true;
      continue;
    }
    if (f.kind == '"') {
      if (c == '"') {
        stack.pop_back();
      } else if (c == '$' && (next == '(' || next == '{')) {
        stack.push_back({next == '(' ? '(' : '{', i, 0});
        mark(++i);
      } else if (c == '`') {
        stack.push_back({'`', i, 0});
      }
      continue;
    }
    // The command itself, or inside $(...), `...` or ${...}: quotes and substitutions open here.
    if (f.kind == '`' && c == '`') {
      stack.pop_back();
    } else if (c == '\'') {
      stack.push_back({'\'', i, 0});
    } else if (c == '$' && next == '\'') {
      stack.push_back({'a', i, 0});
      mark(++i);
    } else if (c == '"') {
      stack.push_back({'"', i, 0});
    } else if (c == '$' && (next == '(' || next == '{')) {
      stack.push_back({next == '(' ? '(' : '{', i, 0});
      mark(++i);
    } else if (c == '`') {
      stack.push_back({'`', i, 0});
    } else if (f.kind == '(' && c == '(') {
      ++f.depth;
    } else if (f.kind == '(' && c == ')') {
      if (f.depth-- == 0) stack.pop_back();
    } else if (f.kind == '{' && c == '{') {
      ++f.depth;
    } else if (f.kind == '{' && c == '}') {
      if (f.depth-- == 0) stack.pop_back();
    } else if (c == '#' && (f.kind == 'T' || f.kind == '(') &&
               (i == 0 || std::string_view(" \t;&|(").find(s[i - 1]) != std::string_view::npos)) {
      // A comment: the rest of the text is not read (a ' in it closes nothing).
      for (size_t j = i + 1; j < s.size(); ++j) out[j] = out[i];
      break;
    }
  }
  if (stack.size() > 1) return Error{unclosed(stack.back())};
  return out;
}

}  // namespace

bool is_shell_code_field(std::string_view field) {
  return field == "training_cmd" || field == "pre_exec" || field == "env";
}

Result<std::vector<Quoting>> shell_quoting(std::string_view text) {
  auto read = read_shell(text);
  if (!read) return read.error();
  std::vector<Quoting> out;
  out.reserve(text.size());
  for (const CharContext& c : read.value()) out.push_back(c.quoting);
  return out;
}

std::string quote_in(Quoting quoting, std::string_view value) {
  std::string out;
  switch (quoting) {
    case Quoting::kNone:
      return shell_quote(value);
    case Quoting::kDouble:
      for (char ch : value) {
        if (ch == '$' || ch == '`' || ch == '"' || ch == '\\') out += '\\';
        out += ch;
      }
      return out;
    case Quoting::kSingle:
      for (char ch : value) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
      return out;
  }
  return out;
}

std::optional<std::pair<std::string, size_t>> command_separator_in(std::string_view s) {
  auto read = read_shell(s);
  if (!read) return std::nullopt;  // refused for its unclosed quote already
  const std::vector<CharContext>& ctx = read.value();
  for (size_t i = 0; i < s.size(); ++i) {
    if (!ctx[i].top || ctx[i].quoting != Quoting::kNone || ctx[i].escaped) continue;
    const char c = s[i];
    const char prev = i > 0 ? s[i - 1] : '\0';
    const char next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '#' && (i == 0 || prev == ' ' || prev == '\t')) return std::nullopt;  // a comment from here on
    const bool redirection = (c == '&' && (prev == '>' || prev == '<' || next == '>')) || (c == '|' && prev == '>');
    if (redirection) continue;
    if (c == ';' || c == '|' || c == '&' || c == '(' || c == ')') {
      std::string what(1, c);
      if ((c == '|' || c == '&') && next == c) what += c;
      return std::make_pair(what, i + 1);
    }
  }
  return std::nullopt;
}

std::string assignment_value(std::string_view s) {
  auto read = read_shell(s);
  if (!read) return std::string(s);
  const std::vector<CharContext>& ctx = read.value();
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (ctx[i].top && ctx[i].quoting == Quoting::kNone && !ctx[i].escaped &&
        std::string_view(" \t;|&<>()").find(s[i]) != std::string_view::npos) {
      out += '\\';
    }
    out += s[i];
  }
  return out;
}

Result<std::string> fill_shell_placeholders(
    std::string_view text, const std::function<std::optional<Placeholder>(std::string_view, size_t)>& find) {
  auto read = read_shell(text);
  if (!read) return read.error();
  const std::vector<CharContext>& ctx = read.value();
  std::string out;
  size_t from = 0;
  for (std::optional<Placeholder> p = find(text, 0); p; p = find(text, from)) {
    if (p->at < from || p->at + p->length > text.size()) break;
    out.append(text.substr(from, p->at - from));
    out += p->quote ? quote_in(ctx[p->at].quoting, p->value) : p->value;
    from = p->at + p->length;
  }
  out.append(text.substr(from));
  return out;
}

}  // namespace scaleprof::launch
