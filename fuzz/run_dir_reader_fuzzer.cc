// libFuzzer target for the run-directory reader (`scaleprof runs`, `scaleprof report`,
// scaleprof.read_run): the input is a generated run directory, its files separated by NUL bytes in
// this order: run.json, rank-00000/rank.json, rank-00000/epochs.csv, rank-00000/steps.csv,
// rank-00000/gpu.csv, node-h/gpu.csv, attempt-1/run.json, attempt-1/rank-00000/epochs.csv. Any
// content must give data or one-line warnings, never a crash, a hang or a sanitizer report.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "collect/gpu_energy.h"
#include "importers/run_reader.h"

namespace {

namespace fs = std::filesystem;

constexpr const char* kFiles[] = {
    "run.json",           "rank-00000/rank.json", "rank-00000/epochs.csv", "rank-00000/steps.csv",
    "rank-00000/gpu.csv", "node-h/gpu.csv",       "attempt-1/run.json",    "attempt-1/rank-00000/epochs.csv"};

// One private folder per fuzzing process, made on first use and removed at exit.
struct Scratch {
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "scaleprof-rundir-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    path = pattern;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  fs::path path;
};

const fs::path& scratch() {
  static const Scratch dir;
  return dir.path;
}

void check_one_line(const std::vector<std::string>& messages) {
  for (const std::string& m : messages) {
    if (m.find('\n') != std::string::npos) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaleprof::collect;    // NOLINT(google-build-using-namespace): the records it writes
  using namespace scaleprof::importers;  // NOLINT(google-build-using-namespace): the reader it fuzzes
  const fs::path root = scratch() / "root";
  const fs::path run_dir = root / "e" / "r";
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(run_dir / "rank-00000", ec);
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t file = 0;
  while (file < std::size(kFiles)) {
    const size_t end = std::min(input.find('\0'), input.size());
    const fs::path path = run_dir / kFiles[file];
    fs::create_directories(path.parent_path(), ec);
    std::ofstream(path, std::ios::binary).write(input.data(), static_cast<std::streamsize>(end));
    ++file;
    if (end >= input.size()) break;
    input.remove_prefix(end + 1);
  }
  ReadOptions options;
  options.local_host = "fuzzhost";
  auto run = read_run(run_dir.string(), options);
  if (run.ok()) {
    const RunData& r = run.value();
    check_one_line(texts(r.warnings));
    if (r.status.empty()) __builtin_trap();
    (void)r.strategy();
    (void)r.world_size();
    (void)r.node_count();
    const int64_t epochs = r.epochs_completed();
    for (const RankData& rank : r.ranks) {
      if (epochs > static_cast<int64_t>(rank.epochs.size())) __builtin_trap();
      (void)summarize_gpu_samples(rank.gpu);
    }
    for (const NodeData& node : r.nodes) (void)summarize_gpu_samples(node.gpu);
  } else if (run.error().message.find('\n') != std::string::npos) {
    __builtin_trap();
  }
  std::vector<std::string> problems;
  auto all = read_runs(root.string(), "", options, &problems);
  check_one_line(problems);
  if (all.ok() && all.value().size() > 1) __builtin_trap();  // one run folder, one row
  return 0;
}
