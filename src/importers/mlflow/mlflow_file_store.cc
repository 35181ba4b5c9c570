// MLflow's file store (mlruns/, itwinai's mllogs/mlflow): one folder per experiment with meta.yaml,
// one folder per run inside it with meta.yaml, params/, tags/, metrics/ (one file per key; keys with
// '/' are sub-folders) and, by default, artifacts/.
//
// Every file is read through core/file_below.h from the store's root: no symbolic link below it is
// followed (a planted `params -> /` or `params/strategy -> /etc/hostname` is reported and skipped),
// nothing blocks on a FIFO, and every read is capped (MlflowReadLimits). A run whose meta.yaml cannot
// be read or parsed, a param over the size limit, a metric line that is not three numbers: each is
// skipped and named in problems(), and the rest of the store is read.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "core/file_below.h"
#include "importers/mlflow/mlflow_meta.h"
#include "importers/mlflow/mlflow_store.h"

namespace scaleprof::importers {

namespace fs = std::filesystem;

namespace {

// MLflow stored run status as a number in old files (RunStatus enum) and as text in newer ones.
std::string status_name(const std::string& s) {
  if (s == "1") return "RUNNING";
  if (s == "2") return "SCHEDULED";
  if (s == "3") return "FINISHED";
  if (s == "4") return "FAILED";
  if (s == "5") return "KILLED";
  return s;
}

// Keys with '/' are nested folders: a key is at most this deep (MLflow keys are at most 250 bytes).
constexpr int kMaxKeyDepth = 32;

class FileStore final : public MlflowStore {
 public:
  FileStore(std::string root, const MlflowReadLimits& limits) : root_(std::move(root)), limits_(limits) {}

  std::string describe() const override { return root_; }

  Result<std::optional<std::string>> experiment_id(const std::string& name) override {
    auto listed = list_folder_below(root_, "", limits_.max_runs);
    if (!listed) return listed.error();
    if (!listed.value())
      return Error{fmt::format("{}: no such MLflow file store directory", root_), ErrorKind::kNotFound};
    for (const FolderEntry& e : *listed.value()) {
      if (e.kind != FolderEntry::Kind::kFolder || e.name == ".trash") continue;
      auto meta = read_meta(e.name + "/meta.yaml");
      if (!meta) continue;
      const auto& m = *meta;
      auto n = m.find("name");
      auto stage = m.find("lifecycle_stage");
      if (n == m.end() || n->second != name) continue;
      if (stage != m.end() && stage->second == "deleted") continue;
      auto id = m.find("experiment_id");
      // The folder is the experiment (MLflow names it by the id); an id that names another folder
      // would read another experiment's runs.
      if (id != m.end() && id->second != e.name) {
        problem(fmt::format("{}/{}/meta.yaml: experiment_id '{}' is not its folder's name; the folder is used", root_,
                            e.name, id->second));
      }
      return std::optional<std::string>{e.name};
    }
    return std::optional<std::string>{};
  }

  Result<std::vector<MlflowRun>> runs(const std::string& experiment_id) override {
    std::vector<MlflowRun> out;
    if (experiment_id.find('/') != std::string::npos || !is_plain_relative_path(experiment_id)) {
      return Error{fmt::format("{}: bad experiment id '{}'", root_, experiment_id)};
    }
    // Non-run entries (models/, traces/, files) may sit beside the runs: room for some of them.
    auto listed = list_folder_below(root_, experiment_id, limits_.max_runs + 10000);
    if (!listed) return listed.error();
    if (!listed.value())
      return Error{fmt::format("{}/{}: no such experiment folder", root_, experiment_id), ErrorKind::kNotFound};
    for (const FolderEntry& e : *listed.value()) {
      const std::string dir = experiment_id + "/" + e.name;
      if (e.kind == FolderEntry::Kind::kSymlink) {
        problem(fmt::format("{}/{}: a symbolic link; not followed", root_, dir));
        continue;
      }
      if (e.kind != FolderEntry::Kind::kFolder) continue;
      auto meta = read_meta(dir + "/meta.yaml");
      if (!meta) continue;  // not a run folder (models/, traces/, ...), or reported
      const auto& m = *meta;
      auto get = [&](const char* key) {
        auto it = m.find(key);
        return it == m.end() ? std::string() : it->second;
      };
      if (get("lifecycle_stage") == "deleted") continue;
      if (out.size() >= limits_.max_runs) {
        return Error{fmt::format("{}/{}: more than {} runs; not read", root_, experiment_id, limits_.max_runs),
                     ErrorKind::kTooLarge};
      }
      MlflowRun r;
      r.run_id = get("run_id");
      if (r.run_id.empty()) r.run_id = get("run_uuid");
      if (r.run_id.empty()) r.run_id = e.name;
      r.name = get("run_name");
      r.status = status_name(get("status"));
      r.artifact_uri = get("artifact_uri");
      if (r.artifact_uri.empty()) r.artifact_uri = (fs::path(root_) / dir / "artifacts").string();
      if (run_dirs_.count(r.run_id) != 0) {
        problem(fmt::format("{}/{}/meta.yaml: run_id '{}' is also the id of {}/{}; run skipped", root_, dir, r.run_id,
                            root_, run_dirs_[r.run_id]));
        continue;
      }
      r.params = read_values(dir + "/params");
      r.tags = read_values(dir + "/tags");
      if (auto it = r.tags.find("mlflow.parentRunId"); it != r.tags.end()) r.parent_id = it->second;
      if (auto it = r.tags.find("mlflow.runName"); it != r.tags.end() && r.name.empty()) r.name = it->second;
      walk_keys(dir + "/metrics", "", 0, [&](const std::string& key) { r.metric_keys.push_back(key); });
      std::sort(r.metric_keys.begin(), r.metric_keys.end());
      run_dirs_[r.run_id] = dir;
      out.push_back(std::move(r));
    }
    return out;
  }

  Result<std::vector<MetricPoint>> metric_history(const MlflowRun& run, const std::string& key) override {
    auto dir = run_dirs_.find(run.run_id);
    if (dir == run_dirs_.end() || !is_plain_relative_path(key)) {
      return Error{fmt::format("run {}: no metric '{}'", run.run_id, key), ErrorKind::kNotFound};
    }
    const std::string relative = dir->second + "/metrics/" + key;
    auto text = read_file_below(root_, relative, limits_.max_metric_file_bytes);
    if (!text) return text.error();
    const std::string shown = (fs::path(root_) / relative).string();
    if (!text.value()) return Error{fmt::format("{}: no such file", shown), ErrorKind::kNotFound};
    auto parsed = parse_mlflow_metric_file(*text.value(), shown, limits_.max_points_per_metric);
    if (!parsed) return parsed.error();
    for (std::string& p : parsed.value().problems) problem(std::move(p));
    return std::move(parsed.value().points);
  }

  Result<std::optional<std::string>> artifact(const MlflowRun& run, const std::string& path) override {
    // The run's own artifacts/ folder (MLflow's default artifact location) is read from the run
    // folder, wherever the store lives now: a store copied from a cluster keeps the old absolute
    // path in meta.yaml, and no link below the run folder may be followed.
    auto dir = run_dirs_.find(run.run_id);
    auto local = local_artifact_dir(run.artifact_uri);
    if (dir != run_dirs_.end() && local) {
      const fs::path own = fs::path(dir->second) / "artifacts";
      fs::path given = fs::path(*local).lexically_normal();
      if (given.filename().empty()) given = given.parent_path();  // a trailing '/'
      if (given.filename() == "artifacts" && given.parent_path().filename() == fs::path(dir->second).filename()) {
        auto checked = checked_artifact_path(path);
        if (!checked) return checked.error();
        return read_file_below(root_, (own / path).generic_string(), limits_.max_artifact_bytes);
      }
    }
    return read_local_artifact(run.artifact_uri, path, limits_.max_artifact_bytes);
  }

  std::string unreadable_artifact_scheme(const MlflowRun& run) const override {
    return remote_artifact_scheme(run.artifact_uri);
  }

 private:
  // A meta.yaml parsed; empty when missing, unreadable or malformed (the last two reported).
  std::optional<std::map<std::string, std::string>> read_meta(const std::string& relative) {
    auto text = read_file_below(root_, relative, limits_.max_meta_bytes);
    if (!text) {
      problem(fmt::format("{}; skipped", text.error().message));
      return std::nullopt;
    }
    if (!text.value()) return std::nullopt;
    const std::string shown = (fs::path(root_) / relative).string();
    auto meta = parse_mlflow_meta(*text.value(), shown);
    if (!meta) {
      problem(fmt::format("{}; skipped", meta.error().message));
      return std::nullopt;
    }
    return std::move(meta).value();
  }

  // Calls `found(key)` for every regular file below `folder` (relative to the root), keys with '/'
  // being nested folders; links and other entries are reported and skipped. At most
  // max_keys_per_run keys (the rest reported) and kMaxKeyDepth levels.
  template <class Found>
  void walk_keys(const std::string& folder, const std::string& prefix, int depth, const Found& found) {
    size_t count = 0;
    walk_keys(folder, prefix, depth, found, &count);
  }

  template <class Found>
  void walk_keys(const std::string& folder, const std::string& prefix, int depth, const Found& found, size_t* count) {
    const std::string here = prefix.empty() ? folder : folder + "/" + prefix;
    auto listed = list_folder_below(root_, here, limits_.max_keys_per_run);
    if (!listed) {
      problem(fmt::format("{}; skipped", listed.error().message));
      return;
    }
    if (!listed.value()) return;
    for (const FolderEntry& e : *listed.value()) {
      const std::string key = prefix.empty() ? e.name : prefix + "/" + e.name;
      const std::string shown = (fs::path(root_) / folder / key).string();
      if (e.kind == FolderEntry::Kind::kFolder && depth + 1 < kMaxKeyDepth) {
        walk_keys(folder, key, depth + 1, found, count);
      } else if (e.kind == FolderEntry::Kind::kFile) {
        if (++*count > limits_.max_keys_per_run) {
          problem(fmt::format("{}/{}: more than {} keys; the rest skipped", root_, folder, limits_.max_keys_per_run));
          return;
        }
        found(key);
      } else {
        problem(fmt::format("{}: {}; skipped", shown,
                            e.kind == FolderEntry::Kind::kSymlink ? "a symbolic link, not followed"
                            : e.kind == FolderEntry::Kind::kFolder
                                ? fmt::format("nested deeper than {} levels", kMaxKeyDepth)
                                : std::string("not a regular file")));
      }
    }
  }

  // key -> value for every file below `folder` (params/, tags/), each at most max_value_bytes.
  std::map<std::string, std::string> read_values(const std::string& folder) {
    std::map<std::string, std::string> out;
    walk_keys(folder, "", 0, [&](const std::string& key) {
      auto text = read_file_below(root_, folder + "/" + key, limits_.max_value_bytes);
      if (!text) {
        problem(fmt::format("{}; skipped", text.error().message));
      } else if (text.value()) {
        out[key] = std::move(*text.value());
      }
    });
    return out;
  }

  std::string root_;
  MlflowReadLimits limits_;
  std::map<std::string, std::string> run_dirs_;  // run id -> "<experiment>/<run folder>" below the root
};

}  // namespace

Result<std::unique_ptr<MlflowStore>> open_mlflow_file_store(const std::string& directory,
                                                            const MlflowReadLimits& limits) {
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    return Error{fmt::format("{}: no such MLflow file store directory (give it with --tracking-uri)", directory),
                 ErrorKind::kNotFound};
  }
  return std::unique_ptr<MlflowStore>(std::make_unique<FileStore>(directory, limits));
}

}  // namespace scaleprof::importers
