// The pybind11 module scaleprof._scaleprof: a thin binding of the collect engine. Every Result error
// becomes a scaleprof.ScaleprofError (a RuntimeError) carrying the C++ message unchanged; the
// idiomatic API is the pure-Python package around it (python/scaleprof/__init__.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <random>
#include <stdexcept>

#include "collect/gpu_energy.h"
#include "collect/gpu_monitor.h"
#include "collect/rank_recorder.h"
#include "collect/run_context.h"
#include "collect/run_names.h"
#include "collect/run_reader.h"
#include "collect/timers.h"

namespace py = pybind11;
namespace collect = scaleprof::collect;

namespace {

struct ScaleprofError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T unwrap(scaleprof::Result<T> r) {
  if (!r) throw ScaleprofError(r.error().message);
  return std::move(r).value();
}

void check(const scaleprof::Status& s) {
  if (!s) throw ScaleprofError(s.error().message);
}

py::dict epoch_dict(const collect::EpochRecord& e) {
  py::dict d;
  d["epoch"] = e.epoch;
  d["start_unix_ns"] = e.start_unix_ns;
  d["end_unix_ns"] = e.end_unix_ns;
  d["duration_s"] = e.duration_s;
  d["samples"] = e.samples;
  return d;
}

py::dict step_dict(const collect::StepRecord& s) {
  py::dict d;
  d["epoch"] = s.epoch;
  d["step"] = s.step;
  d["start_unix_ns"] = s.start_unix_ns;
  d["duration_s"] = s.duration_s;
  d["samples"] = s.samples;
  return d;
}

py::dict gpu_dict(const collect::GpuDeviceSummary& g) {
  py::dict d;
  d["device"] = g.device;
  d["samples"] = g.samples;
  d["mean_utilization_pct"] = g.mean_utilization_pct;
  d["mean_power_w"] = g.mean_power_w;
  d["max_memory_used_bytes"] = g.max_memory_used_bytes;
  d["energy_j"] = g.energy_j;
  d["energy_from_counter"] = g.energy_from_counter;
  return d;
}

// A run directory as plain Python data (enough for tests and notebooks; pandas reads the CSVs).
py::dict run_dict(const collect::RunData& r) {
  py::dict d;
  d["dir"] = r.dir;
  d["experiment"] = r.experiment;
  d["run"] = r.run;
  d["status"] = r.status;
  d["status_reason"] = r.status_reason;
  d["attempt"] = r.attempt;
  py::list attempts;
  for (const collect::AttemptSummary& a : r.attempts) {
    py::dict ad;
    ad["attempt"] = a.attempt;
    ad["dir"] = a.dir;
    ad["status"] = a.status;
    attempts.append(ad);
  }
  d["attempts"] = attempts;
  d["strategy"] = r.strategy();
  d["world_size"] = r.world_size();
  d["nodes"] = r.node_count();
  d["epochs_completed"] = r.epochs_completed();
  d["warnings"] = r.warnings;
  py::list ranks;
  for (const collect::RankData& rank : r.ranks) {
    py::dict rd;
    rd["rank"] = rank.rank;
    rd["dir"] = rank.dir;
    rd["status"] = rank.status;
    rd["host"] = rank.info ? py::cast(rank.info->host) : py::none();
    rd["pid"] = rank.info ? py::cast(rank.info->pid) : py::none();
    rd["write_errors"] = rank.info ? rank.info->write_errors : 0;
    rd["last_write_error"] = rank.info ? rank.info->last_write_error : std::string();
    py::list epochs, steps;
    for (const auto& e : rank.epochs) epochs.append(epoch_dict(e));
    for (const auto& s : rank.steps) steps.append(step_dict(s));
    rd["epochs"] = epochs;
    rd["steps"] = steps;
    rd["trace_files"] = rank.trace_files;
    py::list gpu;
    for (const auto& g : collect::summarize_gpu_samples(rank.gpu)) gpu.append(gpu_dict(g));
    rd["gpu"] = gpu;
    ranks.append(rd);
  }
  d["ranks"] = ranks;
  return d;
}

collect::RunContext detect_context(const py::dict& kw) {
  collect::ContextOverrides o;
  auto int_of = [&](const char* key) -> std::optional<int64_t> {
    if (!kw.contains(key) || kw[key].is_none()) return std::nullopt;
    return kw[key].cast<int64_t>();
  };
  auto str_of = [&](const char* key) -> std::string {
    if (!kw.contains(key) || kw[key].is_none()) return {};
    return kw[key].cast<std::string>();
  };
  o.rank = int_of("rank");
  o.local_rank = int_of("local_rank");
  o.world_size = int_of("world_size");
  o.node_rank = int_of("node_rank");
  o.nodes = int_of("nodes");
  o.job_id = str_of("job_id");
  o.launcher = str_of("launcher");
  o.root = str_of("root");
  o.experiment = str_of("experiment");
  o.run = str_of("run");
  o.strategy = str_of("strategy");
  o.gpu_monitor = str_of("gpu_monitor");
  // A bad argument or variable (Run(rank=-1), RANK=abc) is a ValueError, raised before any training.
  auto detected = collect::detect_run_context(collect::Environment::from_process(), o);
  if (!detected) throw py::value_error(detected.error().message);
  return std::move(detected).value();
}

}  // namespace

PYBIND11_MODULE(_scaleprof, m) {
  m.doc() = "scaleprof engine (C++): run context, rank recorder, GPU monitor, run-directory reader";
  py::register_exception<ScaleprofError>(m, "ScaleprofError", PyExc_RuntimeError);
  m.attr("__version__") = SCALEPROF_VERSION;

  py::class_<collect::RunContext>(m, "RunContext")
      .def_readwrite("rank", &collect::RunContext::rank)
      .def_readwrite("local_rank", &collect::RunContext::local_rank)
      .def_readwrite("world_size", &collect::RunContext::world_size)
      .def_readwrite("local_world_size", &collect::RunContext::local_world_size)
      .def_readwrite("node_rank", &collect::RunContext::node_rank)
      .def_readwrite("nodes", &collect::RunContext::nodes)
      .def_readwrite("launcher", &collect::RunContext::launcher)
      .def_readwrite("job_id", &collect::RunContext::job_id)
      .def_readwrite("host", &collect::RunContext::host)
      .def_readwrite("root", &collect::RunContext::root)
      .def_readwrite("experiment", &collect::RunContext::experiment)
      .def_readwrite("run", &collect::RunContext::run)
      .def_readwrite("strategy", &collect::RunContext::strategy)
      .def_readwrite("gpu_monitor", &collect::RunContext::gpu_monitor)
      .def_readonly("wrapper_pid", &collect::RunContext::wrapper_pid)
      .def_readonly("attempt", &collect::RunContext::attempt)
      .def_readonly("visible_devices", &collect::RunContext::visible_devices)
      .def("__repr__", [](const collect::RunContext& c) {
        return "RunContext(rank=" + std::to_string(c.rank) + ", world_size=" + std::to_string(c.world_size) +
               ", launcher='" + c.launcher + "', experiment='" + c.experiment + "', run='" + c.run + "')";
      });

  m.def(
      "detect_context", [](const py::kwargs& kw) { return detect_context(kw); },
      "Rank, world, node, job and launcher from the environment; keyword arguments override any field.");
  m.def(
      "derived_run_name",
      [](const collect::RunContext& c) { return collect::derived_run_name(c, collect::Environment::from_process()); },
      "The run name every rank derives from the launcher (SLURM step, torchrun rendezvous id), or ''.");
  m.def(
      "generated_run_name",
      [](const std::string& strategy, int64_t world_size) {
        std::random_device rd;
        return collect::generated_run_name(strategy, world_size, collect::unix_now_ns(), rd() & 0xffffu);
      },
      py::arg("strategy"), py::arg("world_size"));
  m.def(
      "check_name", [](const std::string& what, const std::string& name) { check(collect::check_name(what, name)); },
      py::arg("what"), py::arg("name"));

  py::class_<collect::RankRecorder>(m, "RankRecorder")
      .def_static(
          "open",
          [](const collect::RunContext& ctx, const std::string& torch_version, const std::vector<std::string>& command,
             const std::string& gpu_interval) {
            collect::RankRecorderOptions o;
            o.torch_version = torch_version;
            o.command = command;
            o.gpu_interval = unwrap(collect::parse_interval(gpu_interval));
            return unwrap(collect::RankRecorder::open(ctx, o, collect::Environment::from_process()));
          },
          py::arg("context"), py::arg("torch_version") = "", py::arg("command") = std::vector<std::string>{},
          py::arg("gpu_interval") = "1s")
      .def("begin_epoch", [](collect::RankRecorder& r, int64_t epoch) { check(r.begin_epoch(epoch)); })
      .def(
          "end_epoch",
          [](collect::RankRecorder& r, std::optional<int64_t> samples) {
            return epoch_dict(unwrap(r.end_epoch(samples)));
          },
          py::arg("samples") = py::none())
      .def(
          "begin_step", [](collect::RankRecorder& r, std::optional<int64_t> step) { check(r.begin_step(step)); },
          py::arg("step") = py::none())
      .def(
          "end_step",
          [](collect::RankRecorder& r, std::optional<int64_t> samples) {
            return step_dict(unwrap(r.end_step(samples)));
          },
          py::arg("samples") = py::none())
      .def("abandon_epoch", &collect::RankRecorder::abandon_epoch)
      .def("abandon_step", &collect::RankRecorder::abandon_step)
      // Monitoring never kills training: a failed final write is reported on stderr by the recorder
      // and counted in rank.json, not raised into the training's exit path.
      .def(
          "finish", [](collect::RankRecorder& r, bool success) { (void)r.finish(success); }, py::arg("success") = true,
          py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("write_errors", &collect::RankRecorder::write_errors)
      .def("gpu_summary",
           [](const collect::RankRecorder& r) {
             py::list out;
             if (r.gpu_monitor() != nullptr) {
               for (const auto& g : r.gpu_monitor()->summary()) out.append(gpu_dict(g));
             }
             return out;
           })
      .def_property_readonly("context", &collect::RankRecorder::context)
      .def_property_readonly("run_dir", &collect::RankRecorder::run_dir)
      .def_property_readonly("rank_dir", &collect::RankRecorder::rank_dir)
      .def_property_readonly("traces_dir", &collect::RankRecorder::traces_dir)
      .def_property_readonly("gpu_note", &collect::RankRecorder::gpu_note);

  m.def(
      "read_run", [](const std::string& dir) { return run_dict(unwrap(collect::read_run(dir))); }, py::arg("dir"),
      "One run directory as dicts: status, ranks with epochs, steps, trace files and GPU summaries, warnings.");
  m.def(
      "read_runs",
      [](const std::string& root, const std::string& experiment) {
        py::list out;
        for (const auto& r : unwrap(collect::read_runs(root, experiment))) out.append(run_dict(r));
        return out;
      },
      py::arg("root"), py::arg("experiment") = "");
}
