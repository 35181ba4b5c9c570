// libFuzzer target for the whole report from a generated run root: the input, cut at "\n===\n",
// becomes run.json, rank 0's epochs.csv and gpu.csv, and rank 1's epochs.csv of one run (a SLURM job's
// run by its name), and the experiment's superseded-jobs.txt (which `slurm --force` writes and the
// report reads to leave runs out), beside a fixed good run at one worker; then the report is rendered
// as text, CSV, JSON and HTML (no plots).
// Whatever the bytes: no crash, no hang, no runaway allocation, valid UTF-8 JSON, no control
// character in the text form.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "report_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const scaleprof::fuzzing::ScratchRoot root;
  if (!root.ok()) return 0;
  root.write("exp/base/run.json",
             R"({"schema_version": 1, "experiment": "exp", "run": "base", "strategy": "ddp", "world_size": 1})");
  root.write("exp/base/rank-00000/epochs.csv", "epoch,duration_s\n0,10\n1,8\n2,8\n");
  const std::vector<std::string_view> parts = scaleprof::fuzzing::split_parts(input, 5);
  root.write("exp/ddp-n2-r1-slurm4711/run.json", parts[0]);
  root.write("exp/ddp-n2-r1-slurm4711/rank-00000/epochs.csv", parts[1]);
  root.write("exp/ddp-n2-r1-slurm4711/rank-00000/gpu.csv", parts[2]);
  root.write("exp/ddp-n2-r1-slurm4711/rank-00001/epochs.csv", parts[3]);
  root.write("exp/superseded-jobs.txt", parts[4]);
  scaleprof::fuzzing::report_everything(root.path(), 4);
  return 0;
}
