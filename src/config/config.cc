#include "config/config.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "core/file_read.h"
#include "core/terminal_text.h"

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

// Shortens a value quoted in a message so one bad value cannot flood the terminal; the terminal
// sanitiser makes whatever it holds visible.
std::string shown(std::string_view text) {
  std::string out = terminal_safe(text.substr(0, 60));
  if (text.size() > 60) out += "...";
  return out;
}

std::string size_text(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

// Thrown by the expansion counter to stop yaml-cpp's parser; carries the place.
struct YamlLimit {
  YAML::Mark mark;
  std::string message;
};

// Walks the YAML events of a text before any node is built, counting every value as often as
// aliases repeat it, and stops at the first limit passed: more values or more text than
// kMaxExpandedValues / kMaxExpandedBytes, an alias inside the node it names, a second document.
class ExpansionCounter : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      throw YamlLimit{mark, "a second YAML document ('---'); a configuration file holds one"};
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, 0); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    for (const Frame& f : stack_) {
      if (f.anchor == anchor && anchor != YAML::NullAnchor) {
        throw YamlLimit{mark, "an alias inside the node it names (a recursive alias)"};
      }
    }
    const auto it = sizes_.find(anchor);
    const Size size = it == sizes_.end() ? Size{1, 0} : it->second;
    add(mark, size);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                const std::string& value) override {
    leaf(mark, anchor, value.size());
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Size {
    size_t values = 0, bytes = 0;
  };
  struct Frame {
    YAML::anchor_t anchor = YAML::NullAnchor;
    Size size;
  };
  void add(const YAML::Mark& mark, Size size) {
    total_.values += size.values;
    total_.bytes += size.bytes;
    if (!stack_.empty()) {
      stack_.back().size.values += size.values;
      stack_.back().size.bytes += size.bytes;
    }
    if (total_.values > kMaxExpandedValues) {
      throw YamlLimit{mark, fmt::format("with its aliases expanded, the file holds more than {} values (the limit)",
                                        kMaxExpandedValues)};
    }
    if (total_.bytes > kMaxExpandedBytes) {
      throw YamlLimit{mark, fmt::format("with its aliases expanded, the file holds more than {} of text (the limit)",
                                        size_text(kMaxExpandedBytes))};
    }
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, size_t bytes) {
    add(mark, Size{1, bytes});
    if (anchor != YAML::NullAnchor) sizes_[anchor] = Size{1, bytes};
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    add(mark, Size{1, 0});
    stack_.push_back(Frame{anchor, Size{1, 0}});
  }
  void close() {
    if (stack_.empty()) return;
    const Frame f = stack_.back();
    stack_.pop_back();
    // The frame's own count was added to the totals as it grew; the parent frame learns its size.
    if (!stack_.empty()) {
      stack_.back().size.values += f.size.values - 1;
      stack_.back().size.bytes += f.size.bytes;
    }
    if (f.anchor != YAML::NullAnchor) sizes_[f.anchor] = f.size;
  }

  int documents_ = 0;
  Size total_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Size> sizes_;
};

// The one way YAML text becomes nodes: the limits above first, then yaml-cpp's loader.
Result<YAML::Node> load_yaml(const std::string& text, const std::string& source_name) {
  // yaml-cpp reads a raw NUL byte as a tab: found here, it is named for what it is.
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    const size_t line_start = text.rfind('\n', nul);
    const size_t line =
        1 + static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(nul), '\n'));
    const size_t column = line_start == std::string_view::npos ? nul + 1 : nul - line_start;
    return Error{fmt::format("{}:{}:{}: a NUL byte is not allowed in a YAML file", source_name, line, column)};
  }
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    ExpansionCounter counter;
    while (parser.HandleNextDocument(counter)) {
    }
    return YAML::Load(text);
  } catch (const YamlLimit& e) {
    return Error{fmt::format("{}:{}:{}: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.message)};
  } catch (const YAML::Exception& e) {
    return Error{fmt::format("{}:{}:{}: invalid YAML: {}", source_name, e.mark.line + 1, e.mark.column + 1, e.msg)};
  }
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
  if (text.size() > kMaxValueBytes) {
    return Error{fmt::format("{}: a value of {} bytes; at most {}", where, text.size(), size_text(kMaxValueBytes)),
                 ErrorKind::kTooLarge};
  }
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
        if (list.size() >= kMaxListEntries) {
          return Error{fmt::format("{}: more than {} entries", where, kMaxListEntries), ErrorKind::kTooLarge};
        }
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

// The commands of a multi-line string, as a shell reads its lines: a line ending in '\' continues on
// the next (the backslash and line break removed), indentation and trailing blanks are dropped, and
// empty lines are left out. Each entry is {text, number of the line it starts on}.
std::vector<std::pair<std::string, size_t>> logical_lines(std::string_view text) {
  std::vector<std::pair<std::string, size_t>> out;
  std::string current;
  size_t start = 0, number = 0;
  bool continued = false;
  size_t from = 0;
  while (from <= text.size()) {
    size_t end = text.find('\n', from);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(from, end - from);
    ++number;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (!continued) start = number;
    const bool continues = !line.empty() && line.back() == '\\';
    if (continues) line.remove_suffix(1);
    current.append(line);
    continued = continues;
    if (!continued && !current.empty()) {
      out.emplace_back(std::move(current), start);
      current.clear();
    }
    from = end + 1;
  }
  if (!current.empty()) out.emplace_back(std::move(current), start);
  return out;
}

// A YAML string with line breaks, for a field that takes them (FieldSpec::line_breaks): one command
// joined from continued lines, or a list of one entry per line with a note.
Result<Value> multi_line_value(const FieldSpec& field, const std::string& text, const std::string& where,
                               std::vector<std::string>* notes) {
  std::vector<std::pair<std::string, size_t>> lines = logical_lines(text);
  if (field.line_breaks == LineBreaks::kJoinContinued) {
    if (lines.size() > 1) {
      return Error{
          fmt::format("{}: line {} of the value starts a second command ('{}'): the line before it does "
                      "not end in '\\'; a training command is one command: end every line but the last "
                      "with '\\'",
                      where, lines[1].second, shown(lines[1].first))};
    }
    return scalar_value(field, lines.empty() ? std::string() : lines.front().first, where);
  }
  std::vector<std::string> entries;
  for (auto& [line, number] : lines) {
    if (line.front() == '#') continue;  // a shell comment, not a command
    auto one = scalar_value(field, line, fmt::format("{} (line {} of the value)", where, number));
    if (!one) return one.error();
    entries.push_back(std::get<std::vector<std::string>>(one.value()).front());
  }
  notes->push_back(
      fmt::format("{}: a multi-line string, taken as {} command(s), one per line ({} is a list: "
                  "write it as '- command' lines to say so)",
                  where, entries.size(), field.name));
  return Value{entries};
}

Result<Value> node_value(const FieldSpec& field, const YAML::Node& node, const std::string& source,
                         std::vector<std::string>* notes) {
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
    if (field.line_breaks != LineBreaks::kRefuse && node.Scalar().find('\n') != std::string::npos &&
        node.Scalar().size() <= kMaxValueBytes) {
      return multi_line_value(field, node.Scalar(), where, notes);
    }
    return scalar_value(field, node.Scalar(), where);
  }
  if (node.IsSequence()) {
    if (field.kind != Kind::kIntList && field.kind != Kind::kStringList) {
      return Error{fmt::format("{}: expected {}, got a list", where, kind_name(field.kind))};
    }
    if (node.size() > kMaxListEntries) {
      return Error{fmt::format("{}: a list of {} entries; at most {}", where, node.size(), kMaxListEntries),
                   ErrorKind::kTooLarge};
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
    if (node.size() > kMaxListEntries) {
      return Error{fmt::format("{}: a mapping of {} entries; at most {}", where, node.size(), kMaxListEntries),
                   ErrorKind::kTooLarge};
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
        if (part.size() > kMaxValueBytes) {
          return Error{
              fmt::format("{}: a value of {} bytes; at most {}", key_where, part.size(), size_text(kMaxValueBytes)),
              ErrorKind::kTooLarge};
        }
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
  for (const FieldSpec& f : schema_) {
    if (!f.foreign) names.push_back(f.name);
  }
  return names;
}

Status Config::merge_file(const std::string& path) {
  // Read with the one file reader (core/file_read.h): at most one byte past the limit is read, so a
  // huge file (or /dev/zero) is refused, not loaded; a pipe (`-c <(...)`) is read like a file.
  auto text = read_named_file(path, kMaxFileBytes);
  if (const auto* failure = std::get_if<FileReadFailure>(&text)) {
    using What = FileReadFailure::What;
    switch (failure->what) {
      case What::kMissing:
      case What::kOpen:
        return Error{fmt::format("{}: cannot read: {}", path, std::strerror(failure->error)),
                     failure->what == What::kMissing ? ErrorKind::kNotFound : ErrorKind::kIo};
      case What::kTooLarge:
        return Error{
            fmt::format("{}: larger than {}; a configuration file is never that large", path, size_text(kMaxFileBytes)),
            ErrorKind::kTooLarge};
      default:
        return Error{fmt::format("{}: read error", path), ErrorKind::kIo};
    }
  }
  return merge_text(std::get<std::string>(text), path);
}

Status Config::merge_text(std::string_view text, const std::string& source_name) {
  if (text.size() > kMaxFileBytes) {
    return Error{fmt::format("{}: larger than {}; a configuration file is never that large", source_name,
                             size_text(kMaxFileBytes)),
                 ErrorKind::kTooLarge};
  }
  auto loaded = load_yaml(std::string(text), source_name);
  if (!loaded) return loaded.error();
  const YAML::Node root = loaded.value();
  if (root.IsNull()) return Ok{};  // an empty file sets nothing
  if (!root.IsMap()) {
    return Error{
        fmt::format("{}: expected a mapping of field names to values (e.g. 'num_nodes: 2')", place(source_name, root))};
  }
  // Validate everything first, then apply, so a bad file changes nothing.
  std::vector<std::tuple<const FieldSpec*, Value, std::string>> updates;
  std::map<std::string, std::string> seen;  // field -> where it was set in this file
  std::vector<std::string> file_notes;
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
    auto value = node_value(*field, value_node, source_name, &file_notes);
    if (!value) return value.error();
    updates.emplace_back(field, std::move(value).value(), line_of(source_name, key));
  }
  for (auto& [field, value, source] : updates) merge_into(&entries_[field->name], std::move(value), source);
  notes_.insert(notes_.end(), file_notes.begin(), file_notes.end());
  return Ok{};
}

Status Config::set_override(std::string_view flag, std::string_view text) {
  const FieldSpec* field = find(flag);
  const std::string shown_flag = "--" + canonical(flag);
  if (field == nullptr) {
    const std::string hint = closest_name(canonical(flag), all_names());
    return Error{fmt::format("unknown option '{}'{}", shown(shown_flag),
                             hint.empty() ? "" : fmt::format(" (did you mean '--{}'?)", hint)),
                 ErrorKind::kUsage};
  }
  const std::string& where = shown_flag;
  Result<Value> value = Error{};
  if (field->kind == Kind::kStringMap) {
    const size_t eq = text.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return Error{fmt::format("{}: expected NAME=VALUE, got '{}'", where, shown(text))};
    }
    for (std::string_view part : {text.substr(0, eq), text.substr(eq + 1)}) {
      if (part.size() > kMaxValueBytes) {
        return Error{fmt::format("{}: a value of {} bytes; at most {}", where, part.size(), size_text(kMaxValueBytes)),
                     ErrorKind::kTooLarge};
      }
      if (std::string problem = control_character_problem(part); !problem.empty()) {
        return Error{fmt::format("{}: {}", where, problem)};
      }
    }
    value = Value{StringMap{{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))}}};
  } else if ((field->kind == Kind::kIntList || field->kind == Kind::kStringList) && !text.empty() &&
             text.front() == '[') {
    auto list = load_yaml(std::string(text), where);
    if (!list) return list.error();
    value = node_value(*field, list.value(), where, &notes_);
    if (!value) return Error{fmt::format("{}", value.error().message)};
  } else if (field->kind == Kind::kStringList) {
    // "a,b" on the command line is two entries (itwinai's comma lists).
    std::vector<std::string> list;
    std::string_view rest = text;
    while (true) {
      if (list.size() >= kMaxListEntries) {
        return Error{fmt::format("{}: more than {} entries", where, kMaxListEntries), ErrorKind::kTooLarge};
      }
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
  const std::optional<UnsafeCharacter> c = first_unsafe_character(text);
  if (!c) return {};
  return fmt::format("{} at character {} is not allowed (values end up in scripts and file names)",
                     describe_character(*c), c->character_number);
}

}  // namespace scaleprof::config
