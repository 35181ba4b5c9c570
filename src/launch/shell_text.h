// The user's shell code in a launch configuration (training_cmd, pre_exec, env values): written into
// the sbatch script as the user wrote it and expanded by the job's shell when it runs, as sbatch and
// itwinai do. This file reads such text the way bash does for quotes, substitutions and escapes, so
// that scaleprof can (1) refuse what would break the script around it (an unclosed quote swallows the
// lines after it), and (2) put the values it fills in itself (strategy, node count, run name, a
// configuration key's value) into the text quoted for the place they land: outside quotes, inside
// double quotes or inside single quotes. Values that are data never become code this way.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace scaleprof::launch {

// Whether a field of `scaleprof slurm`'s configuration is the user's shell code (training_cmd,
// pre_exec, env), written as it is and expanded by the job's shell; every other field is data.
bool is_shell_code_field(std::string_view field);

// How bash reads a character of shell text: outside quotes (also inside $(...), `...` and ${...},
// which start a fresh command or word), inside '...', or inside "...".
enum class Quoting { kNone, kSingle, kDouble };

// The quoting of every character of `text`, or an error when a quote, $(...), ${...} or backtick
// is not closed ("unclosed ' at character 8") or the text ends in a backslash.
Result<std::vector<Quoting>> shell_quoting(std::string_view text);

// `value` as text that bash reads back as exactly `value` (no expansion, one word) where `quoting`
// is in force: shell_quote() outside quotes, backslash-escaped inside "...", '\'' for a ' inside '...'.
std::string quote_in(Quoting quoting, std::string_view value);

// Where the command would end before its last word: a ';', '|', '&' (not part of a redirection such
// as 2>&1 or &>) or a parenthesis outside quotes and substitutions. training_cmd is the arguments of
// the launcher (torchrun or srun run it), so such a character would cut the command off there. The
// text of the first one and its 1-based position, or nullopt.
std::optional<std::pair<std::string, size_t>> command_separator_in(std::string_view text);

// An env value as the right side of `export NAME=...`: the user's quotes, $VAR, $(...), backticks
// and a leading ~ keep their shell meaning; blanks and ; | & < > ( ) outside quotes are escaped, so
// the value stays one word (`OPTS: --a --b` exports "--a --b"). `text` must pass shell_quoting().
std::string assignment_value(std::string_view text);

// Fills placeholders in shell text: `find(text, at)` looks for the next placeholder at or after
// `at` and returns its position, length and value (nullopt: none left); each is replaced by its
// value quoted for the place it stands (quote_in). The placeholders' positions are in `text`.
struct Placeholder {
  size_t at = 0, length = 0;
  std::string value;
  bool quote = true;  // false: the value is shell text of its own (written as it is)
};
Result<std::string> fill_shell_placeholders(
    std::string_view text, const std::function<std::optional<Placeholder>(std::string_view, size_t)>& find);

}  // namespace scaleprof::launch
