#include "mlflow_sync/profiling_artifact.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "analysis/operator_table.h"
#include "collect/run_file.h"
#include "core/csv_cell.h"
#include "trace/kineto_reader.h"

namespace scaleprof::mlflow_sync {

namespace {

// Microseconds with the nanosecond resolution of the trace.
std::string us(int64_t ns) {
  return fmt::format("{:.3f}", static_cast<double>(ns) / 1000.0);
}

}  // namespace

Result<std::string> profiling_averages_csv(const ProfilingInput& input) {
  // torch keys rows on (name, host/device, user annotation); the first trace's order is kept.
  using Key = std::tuple<std::string, analysis::OpSide, bool>;
  std::map<Key, size_t> index;
  std::vector<analysis::OperatorRow> rows;
  for (const std::string& path : input.trace_files) {
    // Through the file as opened without following a link (collect/run_file.h); messages name the trace.
    auto file = collect::open_run_file(path);
    if (!file) return file.error();
    const std::string opened = file.value().proc_path();
    auto trace = trace::read_kineto_trace(opened);
    if (!trace) {
      std::string message = trace.error().message;
      for (size_t at = message.find(opened); at != std::string::npos; at = message.find(opened, at + path.size())) {
        message.replace(at, opened.size(), path);
      }
      return Error{message, trace.error().kind};
    }
    const analysis::OperatorTable table = analysis::compute_operator_table(trace.value());
    for (const analysis::OperatorRow& row : table.rows) {
      const Key key{row.name, row.side, row.user_annotation};
      auto [it, fresh] = index.emplace(key, rows.size());
      if (fresh) {
        rows.push_back(row);
        continue;
      }
      analysis::OperatorRow& sum = rows[it->second];
      sum.calls += row.calls;
      sum.self_cpu_ns += row.self_cpu_ns;
      sum.cpu_total_ns += row.cpu_total_ns;
      sum.self_device_ns += row.self_device_ns;
      sum.device_total_ns += row.device_total_ns;
    }
  }
  std::string out =
      "name,node_id,self_cuda_time_total,cuda_time_total,cuda_time_total_str,calls,strategy,num_gpus,global_rank,"
      "self_cpu_time_total,cpu_time_total\n";
  for (const analysis::OperatorRow& row : rows) {
    out += fmt::format("{},0,{},{},{}us,{},{},{},{},{},{}\n", csv_cell(row.name), us(row.self_device_ns),
                       us(row.device_total_ns), us(row.device_total_ns), row.calls, csv_cell(input.strategy),
                       input.world_size, input.rank, us(row.self_cpu_ns), us(row.cpu_total_ns));
  }
  return out;
}

}  // namespace scaleprof::mlflow_sync
