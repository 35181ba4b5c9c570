// Hand-made inputs for the scalability report tests: run directories as docs/run-directory.md
// describes them, itwinai CSV files, and tiny Kineto traces with a known GPU time split.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/scalability.h"
#include "scratch_dir.h"

namespace scaleprof::testing {

namespace fs = std::filesystem;

inline std::string run_json(const std::string& experiment, const std::string& run, const std::string& strategy,
                            int world_size, int nodes, const std::string& status = "completed") {
  return fmt::format(
      R"({{"schema_version": 1, "experiment": "{}", "run": "{}", "strategy": "{}", "world_size": {}, "nodes": {}, )"
      R"("status": "{}", "exit_status": 0}})",
      experiment, run, strategy, world_size, nodes, status);
}

inline std::string rank_json(int rank, int world_size, const std::string& host, const std::string& strategy,
                             const std::string& status = "completed") {
  return fmt::format(
      R"({{"schema_version": 1, "rank": {}, "local_rank": {}, "world_size": {}, "host": "{}", "status": "{}", )"
      R"("strategy": "{}"}})",
      rank, rank, world_size, host, status, strategy);
}

// epochs.csv with epochs 0, 1, ... of the given durations.
inline std::string epochs_csv(const std::vector<double>& seconds) {
  std::string out = "epoch,start_unix_ns,end_unix_ns,duration_s,samples\n";
  for (size_t i = 0; i < seconds.size(); ++i) {
    out += fmt::format("{},{},{},{},\n", i, 1000 + i, 2000 + i, seconds[i]);
  }
  return out;
}

// A run with one rank folder per entry of `rank_epochs` (each that rank's epoch durations).
inline std::string make_run(const ScratchDir& root, const std::string& experiment, const std::string& folder,
                            const std::string& run_name, const std::string& strategy, int world_size,
                            const std::vector<std::vector<double>>& rank_epochs, int nodes = 1) {
  const std::string dir = experiment + "/" + folder;
  root.write(dir + "/run.json", run_json(experiment, run_name, strategy, world_size, nodes));
  for (size_t r = 0; r < rank_epochs.size(); ++r) {
    const std::string rdir = fmt::format("{}/rank-{:05d}", dir, r);
    root.write(rdir + "/rank.json", rank_json(static_cast<int>(r), world_size, "node01", strategy));
    root.write(rdir + "/epochs.csv", epochs_csv(rank_epochs[r]));
  }
  return root / dir;
}

// A Kineto trace of one rank: a computation kernel of `compute_us`, an idle gap of `gap_us`, then an
// NCCL kernel of `comm_us`, both launched by one aten::mm. GPU span = compute + gap + comm.
inline std::string tiny_trace(int rank, int compute_us, int gap_us, int comm_us, const std::string& kernel = "sgemm") {
  const int k1 = 20;
  const int k2 = k1 + compute_us + gap_us;
  return fmt::format(
      "{{\"distributedInfo\":{{\"rank\":{},\"world_size\":2}},\"traceEvents\":[\n"
      R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":{},"args":{{"External id":1}}}},)"
      "\n"
      R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,"args":{{"External id":1,"correlation":5}}}},)"
      "\n"
      R"({{"ph":"X","cat":"kernel","name":"{}","pid":0,"tid":7,"ts":{},"dur":{},"args":{{"External id":1,"stream":7,"correlation":5,"device":0}}}},)"
      "\n"
      R"({{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":16,"dur":2,"args":{{"External id":1,"correlation":6}}}},)"
      "\n"
      R"({{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":7,"ts":{},"dur":{},"args":{{"External id":1,"stream":7,"correlation":6,"device":0}}}})"
      "\n]}}",
      rank, k2 + comm_us + 10, kernel, k1, compute_us, k2, comm_us);
}

// A CPU trace of one rank of a 2-rank gloo run: ProfilerStep#1 over [0, 1000) us on the main thread and
// one gloo:all_reduce of 262144 floats (1 MiB) on a gloo thread from `call_us` for `dur_us`.
inline std::string gloo_trace(int rank, int call_us, int dur_us) {
  return fmt::format(
      R"({{"distributedInfo":{{"backend":"gloo","rank":{},"world_size":2,"pg_count":1,)"
      R"("pg_config":[{{"pg_name":"0","pg_desc":"default_pg","pg_size":2,"ranks":[0,1]}}]}},"traceEvents":[)"
      "\n"
      R"({{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000,"args":{{}}}},)"
      "\n"
      R"({{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":10,"dur":50,"args":{{}}}},)"
      "\n"
      R"({{"ph":"X","cat":"user_annotation","name":"gloo:all_reduce","pid":1,"tid":2,"ts":{},"dur":{},)"
      R"("args":{{"Input type":["float"],"Input Dims":[[262144]]}}}})"
      "\n]}}",
      rank, call_us, dur_us);
}

// The scale group of `series` at `workers` in an analysis; nullptr when it has none.
inline const analysis::ScaleGroup* find_group(const analysis::ScalabilityAnalysis& a, const std::string& series,
                                              int64_t workers) {
  for (const analysis::ScaleGroup& g : a.groups) {
    if (g.series == series && g.workers == workers) return &g;
  }
  return nullptr;
}

}  // namespace scaleprof::testing
