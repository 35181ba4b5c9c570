#include "trace/deepspeed_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <variant>

#include "core/file_read.h"
#include "core/number_text.h"
#include "core/terminal_text.h"

namespace scaleprof::trace {

namespace {

// Figures past this are no figure DeepSpeed printed for a model (a parameter count or FLOP/s of
// 10^30): refused, so products and sums of them stay finite.
constexpr double kMaxFigure = 1e30;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// A quoted piece of a line for an error: one line, terminal-safe, at most 60 characters.
std::string quote(std::string_view s) {
  if (s.size() > 60) return "'" + terminal_safe(s.substr(0, 60)) + "...'";
  return "'" + terminal_safe(s) + "'";
}

// "------ Title ------" -> "Title"; "" for a line that is not such a banner. A rule of dashes only gives "-".
std::string_view banner_title(std::string_view line) {
  line = trim(line);
  if (line.size() < 3 || line.front() != '-') return {};
  size_t a = 0, b = line.size();
  while (a < b && (line[a] == '-' || line[a] == ' ')) ++a;
  while (b > a && (line[b - 1] == '-' || line[b - 1] == ' ')) --b;
  if (a == b) return "-";
  if (line.back() != '-') return {};
  return line.substr(a, b - a);
}

// DeepSpeed's unit prefixes (number_to_string): "T", "G" ("B" for parameters), "M", "K", "", "m", "u".
bool unit_scale(std::string_view unit, bool params, double* scale) {
  if (unit.empty())
    *scale = 1;
  else if (unit == "T")
    *scale = 1e12;
  else if (unit == (params ? "B" : "G"))
    *scale = 1e9;
  else if (unit == "M")
    *scale = 1e6;
  else if (unit == "K")
    *scale = 1e3;
  else if (unit == "m")
    *scale = 1e-3;
  else if (unit == "u")
    *scale = 1e-6;
  else
    return false;
  return true;
}

// One printed figure: "<number> <unit><suffix>" (number_to_string: f"{round(x / scale, 2):g} {unit}",
// then the suffix; parameters have the trailing space stripped). The number was rounded to two
// decimals, then written with at most 6 significant digits (`:g`): the rounding is the larger step.
std::optional<DsFigure> parse_figure(std::string_view text, std::string_view suffix, bool params = false) {
  text = trim(text);
  const size_t space = text.find(' ');
  const std::string_view number = text.substr(0, space);
  const std::string_view rest = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
  if (!ends_with(rest, suffix)) return std::nullopt;
  double scale = 1;
  if (!unit_scale(rest.substr(0, rest.size() - suffix.size()), params, &scale)) return std::nullopt;
  NumberSyntax syntax;
  syntax.non_finite = false;
  const std::optional<double> x = parse_double(number, syntax);
  if (!x || *x < 0 || *x * scale > kMaxFigure) return std::nullopt;
  double step = 0.005;
  if (*x > 0) step = std::max(step, 0.5 * std::pow(10.0, std::floor(std::log10(*x)) - 5));
  // Two decimals as printed: scaled from the hundredths, so "16.38 K" is 16380, not 16379.999999999998.
  const double hundredths = std::round(*x * 100);
  const double value = std::fabs(*x * 100 - hundredths) < 1e-6 ? hundredths * (scale / 100) : *x * scale;
  return DsFigure{value, step * scale};
}

struct Parser {
  std::string_view text;
  const std::string& name;
  size_t pos = 0;
  int64_t line_no = 0;
  std::string_view line;  // the current line, without its line break

  bool next() {
    if (pos >= text.size()) return false;
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl;
    line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    return true;
  }
  Error error(const std::string& what) const { return Error{fmt::format("{}:{}: {}", name, line_no, what)}; }
  Error at_end(const std::string& what) const { return Error{fmt::format("{}: {}", name, what)}; }
  // Skips blank lines; false at the end of the text.
  bool next_nonblank() {
    while (next()) {
      if (!trim(line).empty()) return true;
    }
    return false;
  }
};

// The four figures at the start of a module's repr, and where its own extra_repr starts:
// "P = x% Params, M MACs = y% MACs, D = z% latency, R FLOPS[, extra]".
bool parse_module_figures(std::string_view s, DsModule* m) {
  const std::string_view labels[] = {"% Params", "% MACs", "% latency"};
  std::string_view fields[4];
  for (int i = 0; i < 4; ++i) {
    const size_t comma = s.find(", ");
    fields[i] = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 2);
    if (comma == std::string_view::npos && i < 3) return false;
  }
  DsFigure* figures[] = {&m->params, &m->macs, &m->latency_s};
  const std::string_view suffixes[] = {"", "MACs", "s"};
  for (int i = 0; i < 3; ++i) {
    // "<figure> = <percent>% Params"
    const size_t eq = fields[i].find(" = ");
    if (eq == std::string_view::npos || !ends_with(fields[i], labels[i])) return false;
    const std::string_view pct = fields[i].substr(eq + 3, fields[i].size() - eq - 3 - labels[i].size());
    NumberSyntax syntax;
    syntax.non_finite = false;
    if (!parse_double(pct, syntax)) return false;
    const auto f = parse_figure(fields[i].substr(0, eq), suffixes[i], i == 0);
    if (!f) return false;
    *figures[i] = *f;
  }
  const auto rate = parse_figure(fields[3], "FLOPS");
  if (!rate) return false;
  m->flops_per_s = *rate;
  m->has_figures = true;
  return true;
}

size_t indent_of(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  return i;
}

// A class name as Module._get_name() gives it: a Python identifier (letters, digits, '_', and the
// bytes of non-ASCII letters), not starting with a digit.
bool is_class_name(std::string_view s) {
  if (s.empty() || s.size() > kMaxDsNameBytes) return false;
  if (s.front() >= '0' && s.front() <= '9') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x80 || u == '_' || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z');
  });
}

// "<Class>(<rest>" after the "(name): [N x ]" prefix; false when it is not one.
bool split_class(std::string_view s, std::string_view* cls, std::string_view* rest) {
  const size_t paren = s.find('(');
  if (paren == std::string_view::npos || !is_class_name(s.substr(0, paren))) return false;
  *cls = s.substr(0, paren);
  *rest = s.substr(paren + 1);
  return true;
}

// The detailed tree, from its root line (the parser's current line) to the root's closing ")".
Status parse_tree(Parser& p, DsProfile* out) {
  struct Open {
    size_t module;
    size_t indent;
    bool figures_seen = false;
    bool child_seen = false;
  };
  std::vector<Open> open;
  // Adds the module of a header line whose class part is `s` (after any "(name): N x "); opens it when
  // its repr goes on over the next lines.
  auto add = [&](std::string_view name, int64_t repeat, std::string_view s, size_t indent) -> Status {
    std::string_view cls, rest;
    if (!split_class(s, &cls, &rest)) return p.error(fmt::format("expected a module, Class(...), got {}", quote(s)));
    DsModule m;
    m.name = std::string(name);
    m.cls = std::string(cls);
    m.repeat = repeat;
    m.line = p.line_no;
    m.parent = open.empty() ? -1 : static_cast<int64_t>(open.back().module);
    m.depth = static_cast<int32_t>(open.size());
    if (m.depth > kMaxDsDepth) return p.error(fmt::format("modules nested deeper than {}", kMaxDsDepth));
    // Modules the line stands for: its own repeat times its ancestors' (bounded: each at most 1e9, and
    // a product past 2^62 is refused).
    int64_t stands_for = repeat;
    for (int64_t a = m.parent; a >= 0; a = out->modules[static_cast<size_t>(a)].parent) {
      if (__builtin_mul_overflow(stands_for, out->modules[static_cast<size_t>(a)].repeat, &stands_for)) {
        return p.error("folded module runs multiply past 2^63 modules");
      }
    }
    if (__builtin_add_overflow(out->module_count, stands_for, &out->module_count)) {
      return p.error("more than 2^63 modules");
    }
    if (rest.empty()) {  // "Class(": its figures, its own extra_repr lines and its children follow
      out->modules.push_back(std::move(m));
      open.push_back({out->modules.size() - 1, indent});
      return Ok{};
    }
    if (rest.back() != ')') return p.error(fmt::format("a module's line must end with ')': {}", quote(s)));
    rest.remove_suffix(1);
    // "ModuleList()" (empty, no figures: its repr is its own) or the figures.
    if (!rest.empty() && !parse_module_figures(rest, &m)) {
      return p.error(
          fmt::format("expected the module's figures (P = x% Params, M MACs = y% MACs, D = z% latency, "
                      "R FLOPS), got {}",
                      quote(rest)));
    }
    out->modules.push_back(std::move(m));
    return Ok{};
  };
  if (Status root = add("", 1, p.line, 0); !root) return root;
  while (!open.empty()) {
    if (!p.next())
      return p.at_end(fmt::format("the model tree ends before its closing ')' (module of line {})",
                                  out->modules[open.back().module].line));
    if (trim(p.line).empty()) continue;  // _addindent keeps blank lines of a repr blank
    const size_t indent = indent_of(p.line);
    const std::string_view body = p.line.substr(indent);
    Open& top = open.back();
    if (indent == top.indent && body == ")") {
      open.pop_back();
      continue;
    }
    if (indent != top.indent + 2) {
      return p.error(fmt::format("expected a line indented by {} (inside the module of line {}), got {}",
                                 top.indent + 2, out->modules[top.module].line, quote(p.line)));
    }
    if (body.front() == '(') {
      // "(name): Class(...)" or "(a-b): N x Class(...)".
      const size_t close = body.find("): ");
      if (close == std::string_view::npos || close > kMaxDsNameBytes + 1) {
        return p.error(fmt::format("expected a child module, (name): Class(...), got {}", quote(body)));
      }
      const std::string_view child_name = body.substr(1, close - 1);
      std::string_view s = body.substr(close + 3);
      int64_t repeat = 1;
      const size_t x = s.find(" x ");
      if (x != std::string_view::npos && x > 0 && s.substr(0, x).find('(') == std::string_view::npos) {
        const auto n = parse_int64(s.substr(0, x));
        if (!n || *n < 1 || *n > 1'000'000'000)
          return p.error(fmt::format("bad repeat count {}", quote(s.substr(0, x))));
        repeat = *n;
        s = s.substr(x + 3);
      }
      top.child_seen = true;
      if (Status child = add(child_name, repeat, s, indent); !child) return child;
      continue;
    }
    if (top.child_seen) {
      return p.error(fmt::format("expected a child module or ')' after the children, got {}", quote(body)));
    }
    if (!top.figures_seen) {
      DsModule& m = out->modules[top.module];
      if (!parse_module_figures(body, &m)) {
        return p.error(
            fmt::format("expected the module's figures (P = x% Params, M MACs = y% MACs, D = z% latency, "
                        "R FLOPS), got {}",
                        quote(body)));
      }
      top.figures_seen = true;
      continue;
    }
    // A further line of the module's own extra_repr (one that spans lines): not a figure, kept out.
  }
  return Ok{};
}

// A summary line "label:<spaces>value" (line_fmt '{:<70}  {:<8}').
Status parse_summary_line(const Parser& p, DsProfile* out, unsigned* required) {
  const size_t colon = p.line.rfind(':');
  if (colon == std::string_view::npos) {
    return p.error(fmt::format("expected a summary line, label: value, got {}", quote(p.line)));
  }
  const std::string_view label = trim(p.line.substr(0, colon));
  const std::string_view value = trim(p.line.substr(colon + 1));
  auto figure = [&](std::string_view suffix, bool params, DsFigure* f) -> Status {
    const auto v = parse_figure(value, suffix, params);
    if (!v) return p.error(fmt::format("'{}': {} is not a figure as DeepSpeed prints it", label, quote(value)));
    *f = *v;
    return Ok{};
  };
  auto count = [&](std::optional<int64_t>* n) -> Status {
    const auto v = parse_int64(value);
    if (!v || *v < 0) return p.error(fmt::format("'{}': {} is not a count", label, quote(value)));
    *n = *v;
    return Ok{};
  };
  auto optional_figure = [&](std::optional<DsFigure>* f) -> Status {
    DsFigure v;
    if (Status s = figure("s", false, &v); !s) return s;
    *f = v;
    return Ok{};
  };
  if (label == "params per GPU") {
    *required |= 1;
    return figure("", true, &out->params);
  }
  if (label == "fwd MACs per GPU") {
    *required |= 2;
    return figure("MACs", false, &out->fwd_macs);
  }
  if (label == "fwd flops per GPU") {
    *required |= 4;
    return figure("", false, &out->fwd_flops);
  }
  if (label == "fwd latency") {
    *required |= 8;
    return figure("s", false, &out->fwd_latency_s);
  }
  if (label == "world size") return count(&out->world_size);
  if (label == "data parallel size") return count(&out->data_parallel_size);
  if (label == "model parallel size") return count(&out->model_parallel_size);
  if (label == "batch size per GPU") return count(&out->batch_size_per_gpu);
  if (label == "bwd latency") return optional_figure(&out->bwd_latency_s);
  if (label == "step latency") return optional_figure(&out->step_latency_s);
  if (label == "iter latency") return optional_figure(&out->iter_latency_s);
  // Derived lines (FLOP/s, params of model, samples/second) and lines of other DeepSpeed versions: the
  // figures above are what they are made of.
  if (label.empty()) return p.error(fmt::format("expected a summary line, label: value, got {}", quote(p.line)));
  return Ok{};
}

}  // namespace

DsFigure DsModule::flops() const {
  const double v = flops_per_s.value * latency_s.value;
  // |a b - A B| <= a db + b da + da db, with da, db the roundings.
  const double r = flops_per_s.value * latency_s.rounding + latency_s.value * flops_per_s.rounding +
                   flops_per_s.rounding * latency_s.rounding;
  return {v, r};
}

std::string ds_module_path(const DsProfile& profile, size_t index) {
  std::vector<const std::string*> names;
  for (int64_t i = static_cast<int64_t>(index); i > 0; i = profile.modules[static_cast<size_t>(i)].parent) {
    names.push_back(&profile.modules[static_cast<size_t>(i)].name);
  }
  std::string out;
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    if (!out.empty()) out += '.';
    out += **it;
  }
  return out;
}

Result<DsProfile> parse_deepspeed_profile(std::string_view text, const std::string& name) {
  Parser p{text, name, 0, 0, {}};
  DsProfile out;
  out.path = name;
  if (!p.next_nonblank() || banner_title(p.line) != "DeepSpeed Flops Profiler") {
    return p.line_no == 0 ? p.at_end("empty; not a DeepSpeed flops profile")
                          : p.error(
                                "not a DeepSpeed flops profile: expected its banner, "
                                "'---- DeepSpeed Flops Profiler ----'");
  }
  constexpr std::string_view kStep = "Profile Summary at step ";
  if (!p.next() || !starts_with(p.line, kStep) || !ends_with(p.line, ":")) {
    return p.error("expected 'Profile Summary at step N:'");
  }
  const auto step = parse_int64(p.line.substr(kStep.size(), p.line.size() - kStep.size() - 1));
  if (!step) return p.error(fmt::format("the profile step is not a number: {}", quote(p.line)));
  out.profile_step = *step;
  if (!p.next() || trim(p.line) != "Notations:") return p.error("expected 'Notations:'");
  // The notations: text up to a blank line.
  int notes = 0;
  while (p.next() && !trim(p.line).empty()) {
    if (++notes > 32) return p.error("the notations go on past 32 lines: not a DeepSpeed flops profile");
  }
  // The summary, up to a blank line.
  unsigned required = 0;
  while (p.next() && !trim(p.line).empty()) {
    if (Status s = parse_summary_line(p, &out, &required); !s) return s.error();
  }
  if (required != 15) {
    std::string missing;
    const char* names[] = {"params per GPU", "fwd MACs per GPU", "fwd flops per GPU", "fwd latency"};
    for (unsigned i = 0; i < 4; ++i) {
      if ((required & (1U << i)) == 0) missing += (missing.empty() ? "" : ", ") + std::string(names[i]);
    }
    return p.error(fmt::format("the summary lacks {}", missing));
  }
  if (!p.next_nonblank() || banner_title(p.line) != "Aggregated Profile per GPU") {
    return p.error("expected the '---- Aggregated Profile per GPU ----' banner after the summary");
  }
  // Top modules per depth: the tree below has every module's figures, so these are only checked.
  bool tree = false;
  while (true) {
    if (!p.next_nonblank()) return p.at_end("the profile ends before its closing rule of dashes");
    const std::string_view title = banner_title(p.line);
    if (title == "-") break;
    if (title == "Detailed Profile per GPU") {
      tree = true;
      break;
    }
    const std::string_view t = trim(p.line);
    const bool known = starts_with(p.line, "Top ") || starts_with(p.line, "depth ") ||
                       starts_with(p.line, "no __flops__") ||
                       (starts_with(p.line, "    ") &&
                        (starts_with(t, "params ") || starts_with(t, "MACs ") || starts_with(t, "fwd latency ")));
    if (!known) return p.error(fmt::format("unexpected line in the aggregated profile: {}", quote(p.line)));
  }
  if (tree) {
    // The notes, then the model's repr from its root "Class(" at column 0.
    int notes_seen = 0;
    while (true) {
      if (!p.next_nonblank()) return p.at_end("no model tree after the 'Detailed Profile per GPU' banner");
      std::string_view cls, rest;
      if (p.line.front() != ' ' && split_class(p.line, &cls, &rest)) break;
      if (++notes_seen > 16) return p.error("no model tree within 16 lines of the 'Detailed Profile per GPU' banner");
    }
    if (Status s = parse_tree(p, &out); !s) return s.error();
    if (!p.next_nonblank() || banner_title(p.line) != "-") {
      return p.line_no > 0 && p.pos < text.size() ? p.error("expected the closing rule of dashes after the model tree")
                                                  : p.at_end("the profile ends before its closing rule of dashes");
    }
  }
  if (p.next_nonblank()) return p.error(fmt::format("text after the profile's closing rule: {}", quote(p.line)));
  return out;
}

Result<DsProfile> read_deepspeed_profile(const std::string& path) {
  auto text = read_named_file(path, kMaxDsProfileBytes);
  if (const auto* failure = std::get_if<FileReadFailure>(&text)) {
    switch (failure->what) {
      case FileReadFailure::What::kMissing:
        return Error{fmt::format("{}: no such file", path), ErrorKind::kNotFound};
      case FileReadFailure::What::kTooLarge:
        return Error{fmt::format("{}: larger than {} bytes; not a DeepSpeed flops profile", path, kMaxDsProfileBytes),
                     ErrorKind::kTooLarge};
      case FileReadFailure::What::kNotRegular:
        return Error{fmt::format("{}: not a regular file", path), ErrorKind::kRefused};
      default:
        return Error{fmt::format("{}: cannot read", path), ErrorKind::kIo};
    }
  }
  return parse_deepspeed_profile(std::get<std::string>(text), path);
}

}  // namespace scaleprof::trace
