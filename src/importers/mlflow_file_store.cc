// MLflow's file store (mlruns/, itwinai's mllogs/mlflow): one folder per experiment with meta.yaml,
// one folder per run inside it with meta.yaml, params/, tags/, metrics/ (one file per key; keys with
// '/' are sub-folders) and, by default, artifacts/.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "importers/mlflow_meta.h"
#include "importers/mlflow_store.h"

namespace scaleprof::importers {

namespace fs = std::filesystem;

namespace {

bool read_text(const fs::path& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream text;
  text << in.rdbuf();
  *out = text.str();
  return !in.bad();
}

std::vector<fs::path> sorted_dirs(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// key -> file text for every file below `dir` (keys with '/' are nested folders).
std::map<std::string, std::string> read_key_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string text;
    if (!read_text(it->path(), &text)) continue;
    out[it->path().lexically_relative(dir).generic_string()] = std::move(text);
  }
  return out;
}

std::vector<std::string> key_names(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec)) out.push_back(it->path().lexically_relative(dir).generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// MLflow stored run status as a number in old files (RunStatus enum) and as text in newer ones.
std::string status_name(const std::string& s) {
  if (s == "1") return "RUNNING";
  if (s == "2") return "SCHEDULED";
  if (s == "3") return "FINISHED";
  if (s == "4") return "FAILED";
  if (s == "5") return "KILLED";
  return s;
}

bool key_is_safe(const std::string& key) {
  if (key.empty() || key.starts_with("/")) return false;
  for (const fs::path& part : fs::path(key)) {
    if (part == "..") return false;
  }
  return true;
}

class FileStore final : public MlflowStore {
 public:
  explicit FileStore(fs::path root) : root_(std::move(root)) {}

  std::string describe() const override { return root_.string(); }

  Result<std::optional<std::string>> experiment_id(const std::string& name) override {
    for (const fs::path& dir : sorted_dirs(root_)) {
      if (dir.filename() == ".trash") continue;
      std::string text;
      if (!read_text(dir / "meta.yaml", &text)) continue;
      auto meta = parse_mlflow_meta(text, (dir / "meta.yaml").string());
      if (!meta) return meta.error();
      const auto& m = meta.value();
      auto n = m.find("name");
      auto stage = m.find("lifecycle_stage");
      if (n == m.end() || n->second != name) continue;
      if (stage != m.end() && stage->second == "deleted") continue;
      auto id = m.find("experiment_id");
      return std::optional<std::string>{id != m.end() ? id->second : dir.filename().string()};
    }
    return std::optional<std::string>{};
  }

  Result<std::vector<MlflowRun>> runs(const std::string& experiment_id) override {
    std::vector<MlflowRun> out;
    if (!key_is_safe(experiment_id)) return Error{fmt::format("bad experiment id '{}'", experiment_id)};
    const fs::path exp_dir = root_ / experiment_id;
    for (const fs::path& dir : sorted_dirs(exp_dir)) {
      std::string text;
      const fs::path meta_path = dir / "meta.yaml";
      if (!read_text(meta_path, &text)) continue;  // not a run folder (models/, traces/, ...)
      auto meta = parse_mlflow_meta(text, meta_path.string());
      if (!meta) return meta.error();
      const auto& m = meta.value();
      auto get = [&](const char* key) {
        auto it = m.find(key);
        return it == m.end() ? std::string() : it->second;
      };
      if (get("lifecycle_stage") == "deleted") continue;
      MlflowRun r;
      r.run_id = get("run_id");
      if (r.run_id.empty()) r.run_id = get("run_uuid");
      if (r.run_id.empty()) r.run_id = dir.filename().string();
      r.name = get("run_name");
      r.status = status_name(get("status"));
      r.artifact_uri = get("artifact_uri");
      if (r.artifact_uri.empty()) r.artifact_uri = (dir / "artifacts").string();
      r.params = read_key_files(dir / "params");
      r.tags = read_key_files(dir / "tags");
      if (auto it = r.tags.find("mlflow.parentRunId"); it != r.tags.end()) r.parent_id = it->second;
      if (auto it = r.tags.find("mlflow.runName"); it != r.tags.end() && r.name.empty()) r.name = it->second;
      r.metric_keys = key_names(dir / "metrics");
      run_dirs_[r.run_id] = dir;
      out.push_back(std::move(r));
    }
    return out;
  }

  Result<std::vector<MetricPoint>> metric_history(const MlflowRun& run, const std::string& key) override {
    auto dir = run_dirs_.find(run.run_id);
    if (dir == run_dirs_.end() || !key_is_safe(key))
      return Error{fmt::format("run {}: no metric '{}'", run.run_id, key)};
    const fs::path file = dir->second / "metrics" / key;
    std::string text;
    if (!read_text(file, &text)) return Error{fmt::format("{}: cannot read", file.string())};
    return parse_mlflow_metric_file(text, file.string());
  }

  Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) override {
    return read_local_artifact(run.artifact_uri, path);
  }

 private:
  fs::path root_;
  std::map<std::string, fs::path> run_dirs_;
};

}  // namespace

Result<std::unique_ptr<MlflowStore>> open_mlflow_file_store(const std::string& directory) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    return Error{fmt::format("{}: no such MLflow file store directory (give it with --tracking-uri)", directory)};
  }
  return std::unique_ptr<MlflowStore>(std::make_unique<FileStore>(fs::path(directory)));
}

}  // namespace scaleprof::importers
