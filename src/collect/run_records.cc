#include "collect/run_records.h"

#include <fmt/format.h>

#include <iterator>

#include "core/clock_event_reasons.h"
#include "core/json_string.h"

namespace scaleprof::collect {

namespace {

// Optional numbers become empty CSV fields: "unknown" must not read as zero in pandas.
template <class T>
std::string field(const std::optional<T>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string();
}

// A JSON object built member by member, in the order of the documentation.
class JsonObject {
 public:
  void add(const char* key, const std::string& value) { member(key, json_quote(value)); }
  void add_or_null(const char* key, const std::string& value) {
    member(key, value.empty() ? "null" : json_quote(value));
  }
  void add(const char* key, int64_t value) { member(key, fmt::format("{}", value)); }
  void add(const char* key, const std::optional<int64_t>& value) {
    member(key, value ? fmt::format("{}", *value) : "null");
  }
  void add(const char* key, const std::vector<std::string>& values) {
    std::string list = "[";
    for (size_t i = 0; i < values.size(); ++i) list += (i > 0 ? ", " : "") + json_quote(values[i]);
    member(key, list + "]");
  }
  std::string str() const { return text_ + "}\n"; }

 private:
  void member(const char* key, const std::string& json) {
    text_ += (text_.size() > 1 ? ", " : "") + json_quote(key) + ": " + json;
  }
  std::string text_ = "{";
};

}  // namespace

std::string rank_dir_name(int64_t rank) {
  return fmt::format("rank-{:05d}", rank);
}

std::string node_dir_name(const std::string& host) {
  return "node-" + host;
}

std::string run_dir_path(const std::string& root, const std::string& experiment, const std::string& run,
                         int64_t attempt) {
  std::string dir = root;
  if (!dir.empty() && dir.back() != '/') dir += '/';
  dir += experiment + "/" + run;
  if (attempt > 0) dir += fmt::format("/{}{}", kAttemptDirPrefix, attempt);
  return dir;
}

std::string csv_line(const EpochRecord& r) {
  return fmt::format("{},{},{},{:.9f},{}\n", r.epoch, r.start_unix_ns, r.end_unix_ns, r.duration_s,
                     field(r.samples, "{}"));
}

std::string csv_line(const StepRecord& r) {
  return fmt::format("{},{},{},{:.9f},{}\n", r.epoch, r.step, r.start_unix_ns, r.duration_s, field(r.samples, "{}"));
}

std::string csv_line(const GpuSample& s) {
  std::string out;
  append_csv_line(&out, s);
  return out;
}

void append_csv_line(std::string* out, const GpuSample& s) {
  auto it = std::back_inserter(*out);
  it = fmt::format_to(it, "{},{},", s.time_unix_ns, s.device);
  if (s.utilization_pct) it = fmt::format_to(it, "{:.1f}", *s.utilization_pct);
  *it++ = ',';
  if (s.power_w) it = fmt::format_to(it, "{:.3f}", *s.power_w);
  *it++ = ',';
  if (s.memory_used_bytes) it = fmt::format_to(it, "{}", *s.memory_used_bytes);
  *it++ = ',';
  if (s.energy_j) it = fmt::format_to(it, "{:.3f}", *s.energy_j);
  *it++ = ',';
  if (s.sm_clock_mhz) it = fmt::format_to(it, "{}", *s.sm_clock_mhz);
  *it++ = ',';
  if (s.throttle_reasons) append_clock_event_reasons(out, *s.throttle_reasons);
  *it++ = '\n';
}

std::string to_json(const RunInfo& info) {
  JsonObject o;
  o.add("schema_version", int64_t{info.schema_version});
  o.add("experiment", info.experiment);
  o.add("run", info.run);
  o.add_or_null("strategy", info.strategy);
  o.add("world_size", info.world_size);
  o.add("nodes", info.nodes);
  o.add("gpus_per_node", info.gpus_per_node);
  o.add_or_null("launcher", info.launcher);
  o.add_or_null("job_id", info.job_id);
  o.add("command", info.command);
  o.add("hosts", info.hosts);
  o.add("start_unix_ns", info.start_unix_ns);
  o.add("end_unix_ns", info.end_unix_ns);
  o.add("exit_status", info.exit_status);
  o.add("status", info.status);
  o.add_or_null("scaleprof_version", info.scaleprof_version);
  o.add_or_null("torch_version", info.torch_version);
  o.add_or_null("writer", info.writer);
  o.add_or_null("writer_host", info.writer_host);
  o.add("writer_pid", info.writer_pid);
  o.add("attempt", info.attempt);
  o.add("write_errors", info.write_errors);
  o.add_or_null("last_write_error", info.last_write_error);
  o.add("gpu_interval_ns", info.gpu_interval_ns);
  return o.str();
}

std::string to_json(const RankInfo& info) {
  JsonObject o;
  o.add("schema_version", int64_t{info.schema_version});
  o.add("rank", info.rank);
  o.add("local_rank", info.local_rank);
  o.add("world_size", info.world_size);
  o.add("node_rank", info.node_rank);
  o.add("nodes", info.nodes);
  o.add("host", info.host);
  o.add("pid", info.pid);
  o.add("start_unix_ns", info.start_unix_ns);
  o.add("end_unix_ns", info.end_unix_ns);
  o.add("status", info.status);
  o.add("devices", info.devices);
  o.add_or_null("strategy", info.strategy);
  o.add("experiment", info.experiment);
  o.add("run", info.run);
  o.add_or_null("launcher", info.launcher);
  o.add_or_null("job_id", info.job_id);
  o.add_or_null("torch_version", info.torch_version);
  o.add("attempt", info.attempt);
  o.add("write_errors", info.write_errors);
  o.add_or_null("last_write_error", info.last_write_error);
  o.add("gpu_interval_ns", info.gpu_interval_ns);
  if (info.process_group_size) {
    o.add("process_group_size", info.process_group_size);
    o.add("process_group_by", info.process_group_by);
  }
  return o.str();
}

}  // namespace scaleprof::collect
