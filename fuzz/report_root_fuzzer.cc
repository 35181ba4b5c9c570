// libFuzzer target for the whole report from a generated run root: the input, cut at "\n===\n",
// becomes run.json, rank 0's epochs.csv and gpu.csv, and rank 1's epochs.csv of one run, beside a
// fixed good run at one worker; then the report is rendered as text, CSV, JSON and HTML (no plots).
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
  const std::vector<std::string_view> parts = scaleprof::fuzzing::split_parts(input, 4);
  root.write("exp/fuzz/run.json", parts[0]);
  root.write("exp/fuzz/rank-00000/epochs.csv", parts[1]);
  root.write("exp/fuzz/rank-00000/gpu.csv", parts[2]);
  root.write("exp/fuzz/rank-00001/epochs.csv", parts[3]);
  scaleprof::fuzzing::report_everything(root.path(), 4);
  return 0;
}
