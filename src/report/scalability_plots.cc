// Drawing the scalability report's plots: finds gnuplot, runs it as a subprocess on each plot's
// script (report/gnuplot_script.h), and collects the files or SVG elements. What each plot shows is
// report/plot_specs.h.
#include "report/scalability_plots.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/file_read.h"
#include "core/output_file.h"

extern char** environ;  // NOLINT(readability-redundant-declaration): posix_spawn needs it

namespace scaleprof::report {

namespace fs = std::filesystem;

std::string find_gnuplot() {
  if (const char* env = std::getenv("SCALEPROF_GNUPLOT"); env != nullptr) {
    std::string p(env);
    return !p.empty() && access(p.c_str(), X_OK) == 0 ? p : std::string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    size_t colon = dirs.find(':', pos);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(pos, colon - pos);
    if (!dir.empty()) {
      std::string candidate = dir + "/gnuplot";
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    pos = colon + 1;
  }
  return "";
}

bool is_plot_suffix(const std::string& suffix) {
  return suffix == ".png" || suffix == ".svg" || suffix == ".pdf";
}

namespace {

// Runs gnuplot on a script file; stderr goes to a file whose content becomes the error message.
Status run_gnuplot(const std::string& gnuplot, const std::string& script) {
  char dir_template[] = "/tmp/scaleprof-gnuplot-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return Error{"cannot create a temporary folder for gnuplot", ErrorKind::kIo};
  const fs::path dir(dir_template);
  const std::string script_path = (dir / "plot.gp").string();
  const std::string err_path = (dir / "stderr.txt").string();
  if (Status written = write_output_file(script_path, script); !written) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    return written.error();
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string arg0 = gnuplot;
  std::string arg1 = script_path;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  if (rc == 0) waitpid(pid, &status, 0);
  std::ifstream err_in(err_path);
  std::stringstream err;
  err << err_in.rdbuf();
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (rc != 0)
    return Error{fmt::format("cannot run {}: {}", gnuplot, std::strerror(rc)),
                 rc == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg = err.str();
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    const size_t cut = msg.rfind('\n');
    if (cut != std::string::npos) msg = msg.substr(cut + 1);
    return Error{fmt::format("gnuplot failed: {}", msg.empty() ? "no message" : msg)};
  }
  return Ok{};
}

}  // namespace

namespace {

// A file gnuplot drew in the private folder ("" when it could not be read): with the one file
// reader (core/file_read.h), capped far above any plot.
std::string read_whole(const std::string& path) {
  auto text = read_named_file(path, size_t{1} << 30);
  auto* read = std::get_if<std::string>(&text);
  return read != nullptr ? std::move(*read) : std::string();
}

// A private folder (mode 0700, random name) that gnuplot draws into; removed when this goes out of
// scope. gnuplot only ever sees this folder, never a path the user gave.
class PrivateFolder {
 public:
  PrivateFolder() {
    char name[] = "/tmp/scaleprof-plots-XXXXXX";
    if (mkdtemp(name) != nullptr) path_ = name;
  }
  PrivateFolder(const PrivateFolder&) = delete;
  PrivateFolder& operator=(const PrivateFolder&) = delete;
  ~PrivateFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Draws every spec into folder/<index><suffix>, one gnuplot run for all.
Status draw_into(const std::vector<PlotSpec>& specs, const std::string& folder, const std::string& suffix,
                 const std::string& gnuplot) {
  std::string script;
  for (size_t i = 0; i < specs.size(); ++i) {
    script += gnuplot_script(specs[i], suffix, fmt::format("{}/{}{}", folder, i, suffix)) + "reset\n";
  }
  return run_gnuplot(gnuplot, script);
}

}  // namespace

Result<std::vector<std::string>> draw_plots(const std::vector<PlotSpec>& specs, const std::string& dir,
                                            const std::string& suffix, const std::string& gnuplot) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Error{fmt::format("{}: cannot create the plot folder: {}", dir, ec.message()), ErrorKind::kIo};
  std::vector<std::string> files;
  if (specs.empty()) return files;
  // gnuplot draws into a private folder; each plot is then installed with the one output-file writer,
  // so plot files get the same guarantees as every other output (atomic, no symlink games).
  const PrivateFolder drawing;
  if (drawing.path().empty()) return Error{"cannot create a temporary folder for gnuplot", ErrorKind::kIo};
  Status st = draw_into(specs, drawing.path(), suffix, gnuplot);
  if (!st) return st.error();
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string file = fs::absolute(fs::path(dir) / (specs[i].stem + suffix)).string();
    Status written = write_output_file(file, read_whole(fmt::format("{}/{}{}", drawing.path(), i, suffix)));
    if (!written) return written.error();
    files.push_back(file);
  }
  return files;
}

Result<std::vector<std::string>> render_svg_plots(const std::vector<PlotSpec>& specs, const std::string& gnuplot) {
  std::vector<std::string> out;
  if (specs.empty()) return out;
  const PrivateFolder drawing;
  if (drawing.path().empty()) return Error{"cannot create a temporary folder for the SVG plots", ErrorKind::kIo};
  Status st = draw_into(specs, drawing.path(), ".svg", gnuplot);
  if (!st) return st.error();
  for (size_t i = 0; i < specs.size(); ++i) {
    std::string svg = read_whole(fmt::format("{}/{}.svg", drawing.path(), i));
    const size_t start = svg.find("<svg");
    out.push_back(start == std::string::npos ? std::string() : svg.substr(start));
  }
  return out;
}

}  // namespace scaleprof::report
