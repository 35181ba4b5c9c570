// scaleprof command line: argument parsing only; every command calls into the library.
#include <fmt/format.h>
#include <malloc.h>
#include <CLI/CLI.hpp>
#include <new>
#include <string>

#include "cli/exit_codes.h"
#include "cli/mlflow_command.h"
#include "cli/output.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/runs_command.h"
#include "cli/slurm_command.h"
#include "cli/trace_command.h"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"scaleprof: how well does training scale, where does the time go, and why not better"};
  app.set_version_flag("--version", std::string("scaleprof ") + SCALEPROF_VERSION);
  app.require_subcommand(1);
  int exit_code = scaleprof::cli::kExitOk;
  scaleprof::cli::setup_trace_command(app, &exit_code);
  std::vector<std::string> run_command_tail;
  argc = scaleprof::cli::split_run_command(argc, argv, &run_command_tail);
  scaleprof::cli::setup_run_command(app, &exit_code, &run_command_tail);
  scaleprof::cli::setup_runs_command(app, &exit_code);
  scaleprof::cli::setup_report_command(app, &exit_code);
  scaleprof::cli::setup_slurm_command(app, &exit_code);
  scaleprof::cli::setup_mlflow_command(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return scaleprof::cli::kExitUsage;
  }
  return exit_code;
}

// The command line as an out-of-memory message shows it: it names the inputs the command was
// reading. An argument holding a URL shows only its scheme (it may carry a user and password), and
// each argument and the whole line are kept short.
std::string command_line_for_message(int argc, char** argv) {
  std::string line = "scaleprof";
  for (int i = 1; i < argc && line.size() < 400; ++i) {
    std::string arg = argv[i];
    if (const size_t scheme = arg.find("://"); scheme != std::string::npos) arg = arg.substr(0, scheme + 3) + "...";
    if (arg.size() > 120) arg = arg.substr(0, 120) + "...";
    line += " " + arg;
  }
  return line;
}

}  // namespace

int main(int argc, char** argv) {
  // glibc raises its mmap threshold each time a mapped block is freed, so after the first rank's
  // columns and window buffers are freed, the next rank's come from the heap and the freed pages stay
  // resident (fragmented among the small rows kept). A fixed threshold turns that off: blocks of
  // 256 KiB and more are mapped and returned to the system on their own. Measured on 1,024 ranks of
  // bench/collectives_scale.py: peak RSS 15.8 -> 11.3 MiB, CPU time unchanged (docs/scale.md).
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  // The library reports errors as values; this catches what escapes anyway (e.g. out of memory) so
  // the user gets one line and a trustworthy exit code instead of an abort.
  int code = scaleprof::cli::kExitError;
  try {
    code = run(argc, argv);
  } catch (const std::bad_alloc&) {
    // Commands that know which input they were reading say so themselves (e.g. scaleprof slurm);
    // this is the boundary for everything else.
    scaleprof::print_message(stderr, "error",
                             fmt::format("out of memory running `{}`", command_line_for_message(argc, argv)));
  } catch (const std::exception& e) {
    scaleprof::print_message(stderr, "error", e.what());
  } catch (...) {
    scaleprof::print_message(stderr, "error", "unexpected internal failure");
  }
  // Output that never reached standard output (a full disk, /dev/full, a closed pipe) must not end
  // in exit code 0. A command that already failed said why; only a success is turned into a failure.
  if (scaleprof::Status flushed = scaleprof::finish_stdout(); !flushed && code != scaleprof::cli::kExitError) {
    scaleprof::print_message(stderr, "error", flushed.error().message);
    code = scaleprof::cli::kExitError;
  }
  return code;
}
