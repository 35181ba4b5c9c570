// The one configuration mechanism of every command that takes `-c FILE`: a schema of typed fields
// with defaults, YAML files merged left to right, then `--field value` overrides in order, and for
// every value the place it came from (file:line, flag or default).
//
// Errors name the file, line and column, the key, and what was expected: unknown keys come with the
// closest valid key ("did you mean 'num_nodes'?"), wrong types and out-of-range values with the
// allowed range or choices. Strings never carry control characters (newlines included), C1 controls,
// bidirectional or invisible format characters, or bytes that are not UTF-8: every value may end up
// in a shell script or a folder name, where such a character is never what the user meant and can
// make the script read differently from what it runs.
//
// Sizes are bounded (the numbers below), so no input can make the configuration take more than a
// few megabytes: a file, each value, each list, one document per file, and what YAML aliases expand
// to (an alias repeats a whole node; "billion laughs" files expand a kilobyte to gigabytes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "core/result.h"

namespace scaleprof::config {

inline constexpr size_t kMaxFileBytes = size_t{1} << 20;      // one YAML file
inline constexpr size_t kMaxValueBytes = size_t{64} << 10;    // one string value or list entry
inline constexpr size_t kMaxListEntries = 1000;               // entries of one list or mapping
inline constexpr size_t kMaxExpandedValues = 100'000;         // YAML values, aliases expanded
inline constexpr size_t kMaxExpandedBytes = size_t{4} << 20;  // their text, aliases expanded

enum class Kind { kString, kInt, kBool, kIntList, kStringList, kStringMap };

// What a YAML string holding line breaks means for a field (every other value refuses them).
enum class LineBreaks {
  kRefuse,         // an error naming the character
  kJoinContinued,  // one command: lines ending in '\' continue on the next (as a shell reads them),
                   // indentation dropped; any other line break is an error naming the line
  kOnePerLine,     // string lists: one entry per line (continued lines joined), with a note
};

// An ordered string map (YAML order is kept, so scripts list variables as the user wrote them).
using StringMap = std::vector<std::pair<std::string, std::string>>;
using Value = std::variant<std::string, int64_t, bool, std::vector<int64_t>, std::vector<std::string>, StringMap>;

struct FieldSpec {
  std::string name;
  Kind kind = Kind::kString;
  Value default_value;
  std::string help;
  // Integers and the entries of integer lists.
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  // Strings and the entries of string lists: the allowed values (empty: any string).
  std::vector<std::string> choices;
  // Other names accepted for this field in files and flags (itwinai's spellings).
  std::vector<std::string> aliases;
  // For lists: an empty list is an error.
  bool non_empty = false;
  LineBreaks line_breaks = LineBreaks::kRefuse;
  // A key of another tool (itwinai's SLURM builder) that is read only so that the command can map it
  // or reject it with a message naming what to write instead: never printed by --print-config, never
  // offered as a did-you-mean.
  bool foreign = false;
};

struct Entry {
  Value value;
  std::string source;  // "default", "slurm.yaml:12", "--num_nodes"
};

class Config {
 public:
  explicit Config(std::vector<FieldSpec> schema);

  // Merges one YAML file (a mapping of field names to values): maps merge key by key, lists and
  // scalars replace. Nothing changes when an error is returned.
  Status merge_file(const std::string& path);
  // The same for YAML text; `source_name` stands for the file name in sources and messages.
  Status merge_text(std::string_view text, const std::string& source_name);
  // A command-line override: `flag` is the field name with or without leading dashes, '-' or '_'
  // between words ("num-nodes" is num_nodes). Lists take "1,2,4" or "[1, 2, 4]"; maps take KEY=VALUE
  // and add that one key.
  Status set_override(std::string_view flag, std::string_view text);

  const std::vector<FieldSpec>& schema() const { return schema_; }
  const Entry& entry(const std::string& name) const;
  const std::string& str(const std::string& name) const;
  int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::vector<int64_t>& int_list(const std::string& name) const;
  const std::vector<std::string>& string_list(const std::string& name) const;
  const StringMap& string_map(const std::string& name) const;
  // Sets a value from code (e.g. a default that depends on other fields), with its source.
  void set(const std::string& name, Value value, std::string source);
  // Whether a file or flag set the field (its source is not "default").
  bool is_set(const std::string& name) const { return entry(name).source != "default"; }
  // What merging did that the user should know, e.g. a multi-line string taken as a list
  // ("slurm.yaml:7: pre_exec_command: ...").
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  const FieldSpec* find(std::string_view name) const;
  std::vector<std::string> all_names() const;

  std::vector<FieldSpec> schema_;
  std::map<std::string, Entry> entries_;
  std::vector<std::string> notes_;
};

// A value as YAML flow text: strings quoted when YAML would read them otherwise, [1, 2], {A: b}.
std::string format_value(const Value& value);

// The valid name closest to `key` (edit distance, at most a third of its length), or "" when none is.
std::string closest_name(std::string_view key, const std::vector<std::string>& names);

// "" when `text` has none of the characters terminal_safe() escapes (core/terminal_text.h), else a
// sentence naming the first one and its position: "a NUL byte at character 3 is not allowed ...".
std::string control_character_problem(std::string_view text);

}  // namespace scaleprof::config
