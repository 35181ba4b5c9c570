#include "launch/job_state_memory.h"

#include <fmt/format.h>

#include <sstream>
#include <variant>

#include "core/file_read.h"
#include "core/number_text.h"

namespace scaleprof::launch {

namespace {

std::optional<int64_t> field_number(const std::string& s) {
  if (s == "-") return std::nullopt;
  return parse_int64(s);
}

std::string number_field(const std::optional<int64_t>& v) {
  return v ? fmt::format("{}", *v) : "-";
}

}  // namespace

Result<std::map<std::string, RememberedState>> read_job_states(const std::string& path) {
  std::map<std::string, RememberedState> states;
  auto text = read_named_file(path, size_t{16} << 20);
  if (const auto* failure = std::get_if<FileReadFailure>(&text)) {
    if (failure->what == FileReadFailure::What::kMissing) return states;
    return Error{fmt::format("{}: cannot be read", path), ErrorKind::kIo};
  }
  std::istringstream in(std::get<std::string>(text));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string id, state, elapsed, exit_code, extra;
    if (!(words >> id >> state >> elapsed >> exit_code) || words >> extra) continue;
    if (id.find_first_not_of("0123456789") != std::string::npos) continue;
    states[id] = RememberedState{state, field_number(elapsed), field_number(exit_code)};
  }
  return states;
}

std::string job_states_text(const std::map<std::string, RememberedState>& states) {
  std::string out;
  for (const auto& [id, s] : states) {
    out += fmt::format("{} {} {} {}\n", id, s.slurm_state, number_field(s.elapsed_s), number_field(s.exit_code));
  }
  return out;
}

}  // namespace scaleprof::launch
