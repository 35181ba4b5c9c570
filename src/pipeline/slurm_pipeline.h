// `scaleprof slurm`, `slurm analyze` and `slurm status` end to end, so that the CLI only parses: the
// configuration read (-c files, then --FIELD VALUE overrides), the launch checked, what the call does
// decided (launch/script_set.h: decide_action), the scripts previewed, written whole or not at all
// (write_script_set) and submitted, and the job table of `slurm status`. What goes to standard output
// (previews, "saved", "submitted") goes through `print`, every other line through `message`, in the
// order the old command printed them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/captured_command.h"
#include "core/message_sink.h"
#include "core/output_file.h"
#include "core/result.h"
#include "launch/script_set.h"
#include "report/table.h"

namespace scaleprof::pipeline {

// How a slurm command talks: standard output, the messages (standard error), and what it is doing
// right now, kept up to date for the one-line message when memory runs out.
struct SlurmIo {
  TextSink print;
  MessageSink message;
  std::string* doing = nullptr;
};

struct SlurmOptions {
  std::vector<std::string> config_files;  // -c, merged left to right
  std::vector<std::string> overrides;     // --FIELD VALUE after them
  bool force = false, append = false, print_config = false;
  launch::ScriptFlags script;  // --no-submit-job, --no-save-script, -j, -s, --preview
  std::string executable;      // the scaleprof the scripts call (the front-end's own path)
};

struct SlurmAnalyzeOptions {
  std::string input;
  int64_t ranks_per_task = 0;
  std::string analysis = "collectives";
  std::string output;  // folder; default <input>/slurm-analysis
  std::string format = "table";
  int64_t gpus_per_node = 0;
  SlurmOptions flags;  // -c, -j, -s, --preview, --no-submit-job, --no-save-script, --force
};

struct SlurmStatusOptions {
  std::string script_dir = "slurm-scripts";
  int64_t timeout_s = kDefaultClientTimeoutS;
  std::string format = "table";
};

// The commands' ending: nullopt when done; else the kind of the error that stopped it (already told
// through io.message), for the exit code.
using SlurmStop = std::optional<ErrorKind>;

SlurmStop run_slurm(const SlurmOptions& options, const SlurmIo& io);
SlurmStop run_slurm_analyze(const SlurmAnalyzeOptions& options, const SlurmIo& io);

// `slurm status`: the jobs of script_dir's submitted.jsonl, their states asked of SLURM, the jobs that
// never ran recorded for the report; the table to write in `format`.
struct SlurmStatusTable {
  report::Table table;
  report::Format format = report::Format::kTable;
};
Result<SlurmStatusTable> slurm_status(const SlurmStatusOptions& options, const SlurmIo& io);

}  // namespace scaleprof::pipeline
