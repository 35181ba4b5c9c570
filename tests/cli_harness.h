// The one way the unit tests run the scaleprof CLI (the binary this build made, SCALEPROF_CLI_PATH):
// through the shell, so a test may redirect or pipe, with standard output captured and standard error
// kept apart in a temporary file read back, and the exit code (-1 when killed by a signal).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include "test_paths.h"

namespace scaleprof::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// The whole file at `path`, bytes as they are ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs a shell command line: stdout captured, stderr to a file read back.
inline CliRun run_shell(const std::string& command) {
  static int counter = 0;
  const std::string err_file = (std::filesystem::temp_directory_path() /
                                ("scaleprof-cli-err-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
                                   .string();
  CliRun r;
  FILE* p = popen((command + " 2>" + err_file).c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), p)) r.out.append(buf, n);
  const int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_file);
  std::filesystem::remove(err_file);
  return r;
}

// `scaleprof ARGS`; `env` (assignments such as "COLUMNS=100") goes before it, and a positive
// `timeout_s` runs it under timeout(1) so a runaway loop fails the test instead of hanging it.
inline CliRun run_cli(const std::string& args, const std::string& env = "", int timeout_s = 0) {
  std::string command = env.empty() ? "" : env + " ";
  if (timeout_s > 0) command += "timeout " + std::to_string(timeout_s) + " ";
  return run_shell(command + SCALEPROF_CLI_PATH + " " + args);
}

// Whether `program` is on the PATH.
inline bool have_program(const char* program) {
  return run_shell(std::string("command -v ") + program + " >/dev/null").exit_code == 0;
}

// Opens the page `html` in headless Chromium (a profile of its own, removed after); returns the DOM
// after its scripts ran, and puts the console messages (script errors among them) in *console.
inline std::string chromium_dom(const std::string& html, std::string* console) {
  static int counter = 0;
  const std::filesystem::path profile =
      std::filesystem::temp_directory_path() /
      ("scaleprof-chromium-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  std::filesystem::create_directories(profile);
  const CliRun r = run_shell(
      "timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir=" + profile.string() +
      " --enable-logging=stderr --v=0 --virtual-time-budget=2000 --dump-dom file://" + html);
  std::error_code ignored;
  std::filesystem::remove_all(profile, ignored);
  console->clear();
  if (r.exit_code != 0) *console = "chromium exited with " + std::to_string(r.exit_code) + ": " + r.err;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(":CONSOLE") != std::string::npos) *console += line + "\n";
  }
  return r.out;
}

}  // namespace scaleprof::testing
