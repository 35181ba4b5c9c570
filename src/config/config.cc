#include "config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace scaleprof::config {

namespace {

// Where a node sits, for messages: "slurm.yaml:12:3".
std::string place(const std::string& source, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.line < 0) return source;
  return fmt::format("{}:{}:{}", source, mark.line + 1, mark.column + 1);
}

std::string line_of(const std::string& source, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.line < 0 ? source : fmt::format("{}:{}", source, mark.line + 1);
}

std::string kind_name(Kind kind) {
  switch (kind) {
    case Kind::kString:
      return "a string";
    case Kind::kInt:
      return "an integer";
    case Kind::kBool:
      return "true or false";
    case Kind::kIntList:
      return "a list of integers";
    case Kind::kStringList:
      return "a list of strings";
    case Kind::kStringMap:
      return "a mapping of names to strings";
  }
  return "a value";
}

// Shortens a value quoted in a message so one bad value cannot flood the terminal.
std::string shown(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 60)) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? fmt::format("\\x{:02x}", u) : std::string(1, c);
  }
  if (text.size() > 60) out += "...";
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool parse_integer(std::string_view text, int64_t* out) {
  std::string_view t = text;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  bool negative = false;
  if (!t.empty() && (t.front() == '-' || t.front() == '+')) {
    negative = t.front() == '-';
    t.remove_prefix(1);
  }
  if (t.empty() || t.size() > 18) return false;  // 18 digits cannot overflow int64
  int64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = negative ? -v : v;
  return true;
}

bool parse_bool(std::string_view text, bool* out) {
  const std::string t = lower(text);
  if (t == "true" || t == "yes" || t == "on") {
    *out = true;
    return true;
  }
  if (t == "false" || t == "no" || t == "off") {
    *out = false;
    return true;
  }
  return false;
}

// Converts scalar text to a field's kind; `where` prefixes messages ("slurm.yaml:3:12: num_nodes").
Result<Value> scalar_value(const FieldSpec& field, std::string_view text, const std::string& where) {
  if (std::string problem = control_character_problem(text); !problem.empty()) {
    return Error{fmt::format("{}: {}", where, problem)};
  }
  auto check_choice = [&](const std::string& s) -> Status {
    if (field.choices.empty() || std::find(field.choices.begin(), field.choices.end(), s) != field.choices.end()) {
      return Ok{};
    }
    std::string hint = closest_name(s, field.choices);
    return Error{fmt::format("{}: '{}' is not one of {}{}", where, shown(s), fmt::join(field.choices, ", "),
                             hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint))};
  };
  auto check_int = [&](std::string_view t, int64_t* v) -> Status {
    if (!parse_integer(t, v)) return Error{fmt::format("{}: expected an integer, got '{}'", where, shown(t))};
    if (*v < field.min || *v > field.max) {
      return Error{fmt::format("{}: {} is out of range ({} to {})", where, *v, field.min, field.max)};
    }
    return Ok{};
  };
  switch (field.kind) {
    case Kind::kString: {
      std::string s(text);
      if (auto ok = check_choice(s); !ok) return ok.error();
      return Value{s};
    }
    case Kind::kInt: {
      int64_t v = 0;
      if (auto ok = check_int(text, &v); !ok) return ok.error();
      return Value{v};
    }
    case Kind::kBool: {
      bool b = false;
      if (!parse_bool(text, &b)) return Error{fmt::format("{}: expected true or false, got '{}'", where, shown(text))};
      return Value{b};
    }
    case Kind::kIntList: {
      // itwinai accepts "1,2,4" as well as a list.
      std::vector<int64_t> list;
      std::string_view rest = text;
      while (true) {
        const size_t comma = rest.find(',');
        int64_t v = 0;
        if (auto ok = check_int(rest.substr(0, comma), &v); !ok) return ok.error();
        list.push_back(v);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
      }
      return Value{list};
    }
    case Kind::kStringList: {
      std::string s(text);
      if (auto ok = check_choice(s); !ok) return ok.error();
      return Value{std::vector<std::string>{s}};
    }
    case Kind::kStringMap:
      break;
  }
  return Error{fmt::format("{}: expected {}, got '{}'", where, kind_name(field.kind), shown(text))};
}

Result<Value> node_value(const FieldSpec& field, const YAML::Node& node, const std::string& source) {
  const std::string where = fmt::format("{}: {}", place(source, node), field.name);
  if (node.IsNull()) {
    switch (field.kind) {
      case Kind::kString:
        return Value{std::string()};
      case Kind::kIntList:
      case Kind::kStringList:
      case Kind::kStringMap:
        if (field.non_empty) return Error{fmt::format("{}: must not be empty", where)};
        if (field.kind == Kind::kIntList) return Value{std::vector<int64_t>{}};
        if (field.kind == Kind::kStringList) return Value{std::vector<std::string>{}};
        return Value{StringMap{}};
      default:
        return Error{fmt::format("{}: expected {}, got nothing", where, kind_name(field.kind))};
    }
  }
  if (node.IsScalar()) {
    if (field.kind == Kind::kStringMap) {
      return Error{fmt::format("{}: expected {}, got '{}'", where, kind_name(field.kind), shown(node.Scalar()))};
    }
    return scalar_value(field, node.Scalar(), where);
  }
  if (node.IsSequence()) {
    if (field.kind != Kind::kIntList && field.kind != Kind::kStringList) {
      return Error{fmt::format("{}: expected {}, got a list", where, kind_name(field.kind))};
    }
    std::vector<int64_t> ints;
    std::vector<std::string> strings;
    for (const YAML::Node& item : node) {
      const std::string item_where = fmt::format("{}: {}", place(source, item), field.name);
      if (!item.IsScalar()) {
        return Error{fmt::format("{}: expected {}, found a nested {}", item_where, kind_name(field.kind),
                                 item.IsMap()        ? "mapping"
                                 : item.IsSequence() ? "list"
                                                     : "empty entry")};
      }
      auto v = scalar_value(field, item.Scalar(), item_where);
      if (!v) return v.error();
      if (field.kind == Kind::kIntList) {
        const auto& one = std::get<std::vector<int64_t>>(v.value());
        if (one.size() != 1)
          return Error{fmt::format("{}: expected an integer, got '{}'", item_where, shown(item.Scalar()))};
        ints.push_back(one.front());
      } else {
        strings.push_back(std::get<std::vector<std::string>>(v.value()).front());
      }
    }
    if (field.non_empty && ints.empty() && strings.empty()) return Error{fmt::format("{}: must not be empty", where)};
    if (field.kind == Kind::kIntList) return Value{ints};
    return Value{strings};
  }
  if (node.IsMap()) {
    if (field.kind != Kind::kStringMap) {
      return Error{fmt::format("{}: expected {}, got a mapping", where, kind_name(field.kind))};
    }
    StringMap map;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key_node = it->first;  // copies: the iterator's pair is a temporary
      const YAML::Node value_node = it->second;
      const std::string key_where = fmt::format("{}: {}", place(source, key_node), field.name);
      if (!key_node.IsScalar() || !(value_node.IsScalar() || value_node.IsNull())) {
        return Error{fmt::format("{}: expected NAME: value pairs of plain strings", key_where)};
      }
      const std::string& key = key_node.Scalar();
      const std::string value = value_node.IsNull() ? std::string() : value_node.Scalar();
      for (std::string_view part : {std::string_view(key), std::string_view(value)}) {
        if (std::string problem = control_character_problem(part); !problem.empty()) {
          return Error{fmt::format("{}: {}", key_where, problem)};
        }
      }
      auto existing = std::find_if(map.begin(), map.end(), [&](const auto& kv) { return kv.first == key; });
      if (existing != map.end()) return Error{fmt::format("{}: key '{}' appears twice", key_where, shown(key))};
      map.emplace_back(key, value);
    }
    return Value{map};
  }
  return Error{fmt::format("{}: expected {}", where, kind_name(field.kind))};
}

// Flags and keys may use '-' or '_' between words.
std::string canonical(std::string_view name) {
  while (!name.empty() && name.front() == '-') name.remove_prefix(1);
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

void merge_into(Entry* entry, Value value, std::string source) {
  if (auto* map = std::get_if<StringMap>(&entry->value); map != nullptr && std::holds_alternative<StringMap>(value)) {
    for (auto& entry_kv : std::get<StringMap>(value)) {
      const std::string& key = entry_kv.first;
      auto it = std::find_if(map->begin(), map->end(), [&key](const auto& kv) { return kv.first == key; });
      if (it != map->end()) {
        it->second = std::move(entry_kv.second);
      } else {
        map->push_back(std::move(entry_kv));
      }
    }
  } else {
    entry->value = std::move(value);
  }
  entry->source = std::move(source);
}

}  // namespace

Config::Config(std::vector<FieldSpec> schema) : schema_(std::move(schema)) {
  for (const FieldSpec& f : schema_) entries_[f.name] = Entry{f.default_value, "default"};
}

const FieldSpec* Config::find(std::string_view name) const {
  const std::string key = canonical(name);
  for (const FieldSpec& f : schema_) {
    if (f.name == key || std::find(f.aliases.begin(), f.aliases.end(), key) != f.aliases.end()) return &f;
  }
  return nullptr;
}

std::vector<std::string> Config::all_names() const {
  std::vector<std::string> names;
  for (const FieldSpec& f : schema_) names.push_back(f.name);
  return names;
}

Status Config::merge_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read: {}", path, std::strerror(errno))};
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{fmt::format("{}: read error", path)};
  return merge_text(text.str(), path);
}

Status Config::merge_text(std::string_view text, const std::string& source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("{}:{}:{}: invalid YAML: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.msg)};
  }
  if (root.IsNull()) return Ok{};  // an empty file sets nothing
  if (!root.IsMap()) {
    return Error{
        fmt::format("{}: expected a mapping of field names to values (e.g. 'num_nodes: 2')", place(source_name, root))};
  }
  // Validate everything first, then apply, so a bad file changes nothing.
  std::vector<std::tuple<const FieldSpec*, Value, std::string>> updates;
  std::map<std::string, std::string> seen;  // field -> where it was set in this file
  for (auto it = root.begin(); it != root.end(); ++it) {
    // A copy: yaml-cpp's iterator hands out a temporary pair, and a reference to it would dangle.
    const YAML::Node key = it->first;
    const YAML::Node value_node = it->second;
    if (!key.IsScalar()) return Error{fmt::format("{}: keys must be plain names", place(source_name, key))};
    const FieldSpec* field = find(key.Scalar());
    if (field == nullptr) {
      const std::string hint = closest_name(canonical(key.Scalar()), all_names());
      return Error{fmt::format("{}: unknown key '{}'{}", place(source_name, key), shown(key.Scalar()),
                               hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint))};
    }
    if (auto [at, fresh] = seen.emplace(field->name, line_of(source_name, key)); !fresh) {
      return Error{
          fmt::format("{}: '{}' is set twice (first at {})", place(source_name, key), field->name, at->second)};
    }
    auto value = node_value(*field, value_node, source_name);
    if (!value) return value.error();
    updates.emplace_back(field, std::move(value).value(), line_of(source_name, key));
  }
  for (auto& [field, value, source] : updates) merge_into(&entries_[field->name], std::move(value), source);
  return Ok{};
}

Status Config::set_override(std::string_view flag, std::string_view text) {
  const FieldSpec* field = find(flag);
  const std::string shown_flag = "--" + canonical(flag);
  if (field == nullptr) {
    const std::string hint = closest_name(canonical(flag), all_names());
    return Error{fmt::format("unknown option '{}'{}", shown(shown_flag),
                             hint.empty() ? "" : fmt::format(" (did you mean '--{}'?)", hint))};
  }
  const std::string& where = shown_flag;
  Result<Value> value = Error{};
  if (field->kind == Kind::kStringMap) {
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error{fmt::format("{}: expected NAME=VALUE, got '{}'", where, shown(text))};
    }
    for (std::string_view part : {text}) {
      if (std::string problem = control_character_problem(part); !problem.empty()) {
        return Error{fmt::format("{}: {}", where, problem)};
      }
    }
    value = Value{StringMap{{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))}}};
  } else if ((field->kind == Kind::kIntList || field->kind == Kind::kStringList) && !text.empty() &&
             text.front() == '[') {
    try {
      value = node_value(*field, YAML::Load(std::string(text)), where);
    } catch (const YAML::Exception& e) {
      return Error{fmt::format("{}: invalid list '{}': {}", where, shown(text), e.msg)};
    }
    if (!value) return Error{fmt::format("{}", value.error().message)};
  } else if (field->kind == Kind::kStringList) {
    // "a,b" on the command line is two entries (itwinai's comma lists).
    std::vector<std::string> list;
    std::string_view rest = text;
    while (true) {
      const size_t comma = rest.find(',');
      auto one = scalar_value(*field, rest.substr(0, comma), fmt::format("{}: {}", where, field->name));
      if (!one) return one.error();
      list.push_back(std::get<std::vector<std::string>>(one.value()).front());
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    value = Value{list};
  } else {
    value = scalar_value(*field, text, where);
  }
  if (!value) return value.error();
  if (field->non_empty) {
    bool empty = false;
    if (auto* l = std::get_if<std::vector<int64_t>>(&value.value())) empty = l->empty();
    if (auto* l = std::get_if<std::vector<std::string>>(&value.value())) empty = l->empty();
    if (empty) return Error{fmt::format("{}: must not be empty", where)};
  }
  merge_into(&entries_[field->name], std::move(value).value(), where);
  return Ok{};
}

const Entry& Config::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) throw std::logic_error("config field not in schema: " + name);
  return it->second;
}

const std::string& Config::str(const std::string& name) const {
  return std::get<std::string>(entry(name).value);
}
int64_t Config::integer(const std::string& name) const {
  return std::get<int64_t>(entry(name).value);
}
bool Config::boolean(const std::string& name) const {
  return std::get<bool>(entry(name).value);
}
const std::vector<int64_t>& Config::int_list(const std::string& name) const {
  return std::get<std::vector<int64_t>>(entry(name).value);
}
const std::vector<std::string>& Config::string_list(const std::string& name) const {
  return std::get<std::vector<std::string>>(entry(name).value);
}
const StringMap& Config::string_map(const std::string& name) const {
  return std::get<StringMap>(entry(name).value);
}

void Config::set(const std::string& name, Value value, std::string source) {
  entries_[name] = Entry{std::move(value), std::move(source)};
}

std::string format_value(const Value& value) {
  auto quote = [](const std::string& s) {
    // Plain when YAML reads it back as the same string; otherwise double-quoted with escapes.
    bool plain = !s.empty() && s.find_first_of(":#{}[],&*!|>'\"%@`\\") == std::string::npos && s.front() != ' ' &&
                 s.back() != ' ' && s.front() != '-' && s.front() != '?';
    if (plain) {
      int64_t n = 0;
      bool b = false;
      const std::string l = lower(s);
      plain = !parse_integer(s, &n) && !parse_bool(s, &b) && l != "null" && l != "~";
    }
    if (plain) return s;
    std::string out = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  };
  struct Visitor {
    decltype(quote)& q;
    std::string operator()(const std::string& s) const { return q(s); }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const std::vector<int64_t>& l) const { return fmt::format("[{}]", fmt::join(l, ", ")); }
    std::string operator()(const std::vector<std::string>& l) const {
      std::vector<std::string> items;
      items.reserve(l.size());
      for (const std::string& s : l) items.push_back(q(s));
      return fmt::format("[{}]", fmt::join(items, ", "));
    }
    std::string operator()(const StringMap& m) const {
      std::vector<std::string> items;
      items.reserve(m.size());
      for (const auto& [k, v] : m) items.push_back(fmt::format("{}: {}", q(k), q(v)));
      return fmt::format("{{{}}}", fmt::join(items, ", "));
    }
  };
  return std::visit(Visitor{quote}, value);
}

std::string closest_name(std::string_view key, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const std::string& name : names) {
    // Levenshtein distance, two rows.
    std::vector<size_t> prev(name.size() + 1), cur(name.size() + 1);
    for (size_t j = 0; j <= name.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= key.size(); ++i) {
      cur[0] = i;
      for (size_t j = 1; j <= name.size(); ++j) {
        const size_t substitution = prev[j - 1] + (key[i - 1] == name[j - 1] ? 0 : 1);
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitution});
      }
      std::swap(prev, cur);
    }
    if (prev[name.size()] < best_distance) {
      best_distance = prev[name.size()];
      best = name;
    }
  }
  const size_t limit = std::max<size_t>(2, key.size() / 3);
  return best_distance <= limit ? best : std::string();
}

std::string control_character_problem(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      const char* what = c == '\n'   ? "a newline"
                         : c == '\r' ? "a carriage return"
                         : c == '\t' ? "a tab"
                                     : "a control character";
      return fmt::format("{} at character {} is not allowed (values end up in scripts and file names)", what, i + 1);
    }
  }
  return {};
}

}  // namespace scaleprof::config
