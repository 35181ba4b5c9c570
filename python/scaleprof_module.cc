// The pybind11 module scaleprof._scaleprof: a thin binding of the collect engine, of the scalability
// report pipeline and of the trace reports (trace_analysis_binding.cc). Every Result error becomes a
// scaleprof.ScaleprofError (a RuntimeError) carrying the C++ message unchanged; the idiomatic API is the pure-Python
// package around it (python/scaleprof/__init__.py).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <random>
#include <stdexcept>

#include "binding_errors.h"
#include "collect/gpu_energy.h"
#include "collect/gpu_monitor.h"
#include "collect/rank_recorder.h"
#include "collect/run_context.h"
#include "collect/run_names.h"
#include "collect/timers.h"
#include "core/file_size_signal.h"
#include "importers/run_reader.h"
#include "path_argument.h"
#include "pipeline/report_outputs.h"
#include "trace_analysis_binding.h"

namespace py = pybind11;
namespace collect = scaleprof::collect;
namespace importers = scaleprof::importers;

namespace {

using scaleprof::python::check;
using scaleprof::python::path_argument;
using scaleprof::python::ScaleprofError;
using scaleprof::python::unwrap;
using scaleprof::python::utf8_message;

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
py::dict run_dict(const importers::RunData& r) {
  py::dict d;
  d["dir"] = r.dir;
  d["experiment"] = r.experiment;
  d["run"] = r.run;
  d["status"] = r.status;
  d["status_reason"] = r.status_reason;
  d["attempt"] = r.attempt;
  py::list attempts;
  for (const importers::AttemptSummary& a : r.attempts) {
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
  d["warnings"] = scaleprof::texts(r.warnings);
  py::list ranks;
  for (const importers::RankData& rank : r.ranks) {
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

// -- Arguments: conversion only. A Python value that is not of the argument's type is a TypeError, an
// integer beyond int64 or text that is not text a ValueError, each naming the argument and the value
// (never pybind11's "incompatible function arguments" dump); the range and content checks are the
// library's (detect_run_context, check_given_text, check_record_arguments, parse_interval), raised as
// ValueError.

// repr() of a value for a message, cut to a readable length.
std::string shown(py::handle value) {
  std::string text;
  try {
    text = py::repr(value).cast<std::string>();
  } catch (const std::exception&) {  // a __repr__ that raises (or is not text): the message still comes
    PyErr_Clear();
    text = "<" + py::type::handle_of(value).attr("__name__").cast<std::string>() + " object>";
  }
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

std::string type_name(py::handle value) {
  return py::type::handle_of(value).attr("__name__").cast<std::string>();
}

// None -> nullopt; an int (or anything with __index__ but bool: numpy and torch integers) -> its value.
std::optional<int64_t> int_argument(py::handle value, const char* name) {
  if (value.is_none()) return std::nullopt;
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr())) {
    throw py::type_error(fmt::format("{} must be an integer, not {} ({})", name, type_name(value), shown(value)));
  }
  auto index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!index) throw py::error_already_set();
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0) {
    throw py::value_error(
        fmt::format("{} {} is out of range (at most {})", name, shown(index), std::numeric_limits<int64_t>::max()));
  }
  if (v == -1 && PyErr_Occurred()) throw py::error_already_set();
  return static_cast<int64_t>(v);
}

// None -> nullopt; a str (or, for a path, an os.PathLike giving one) -> its UTF-8 text, checked by
// check_given_text (an explicit "" is an error, not the default).
std::optional<std::string> text_argument(py::handle value, const char* name, bool path = false) {
  if (value.is_none()) return std::nullopt;
  if (path) {
    // A path is its bytes (path_argument.h: os.fsencode, NUL refused), not text: a non-UTF-8 name is a name.
    std::optional<std::string> bytes = path_argument(value, name);
    if (!bytes) {
      throw py::type_error(
          fmt::format("{} must be a str or os.PathLike, not {} ({})", name, type_name(value), shown(value)));
    }
    if (auto s = collect::check_given_text(name, *bytes); !s) throw py::value_error(s.error().message);
    return bytes;
  }
  py::object text = py::reinterpret_borrow<py::object>(value);
  if (!PyUnicode_Check(text.ptr())) {
    throw py::type_error(fmt::format("{} must be a str, not {} ({})", name, type_name(value), shown(value)));
  }
  Py_ssize_t size = 0;
  const char* utf8 = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (utf8 == nullptr) {
    PyErr_Clear();
    throw py::value_error(fmt::format("{} {} is not valid text (it cannot be written as UTF-8)", name, shown(value)));
  }
  std::string out(utf8, static_cast<size_t>(size));
  if (auto s = collect::check_given_text(name, out); !s) throw py::value_error(s.error().message);
  return out;
}

// A path that must be given (read_run's dir, read_runs' root): as text_argument's path, None refused.
std::string required_path(py::handle value, const char* name) {
  if (value.is_none()) throw py::type_error(fmt::format("{} must be a str or os.PathLike, not None", name));
  return *text_argument(value, name, /*path=*/true);
}

collect::RunContext detect_context(const py::dict& kw) {
  collect::ContextOverrides o;
  auto arg = [&](const char* key) -> py::object {
    if (!kw.contains(key)) return py::none();
    return kw[key];
  };
  o.rank = int_argument(arg("rank"), "rank");
  o.local_rank = int_argument(arg("local_rank"), "local_rank");
  o.world_size = int_argument(arg("world_size"), "world_size");
  o.node_rank = int_argument(arg("node_rank"), "node_rank");
  o.nodes = int_argument(arg("nodes"), "nodes");
  o.job_id = text_argument(arg("job_id"), "job_id").value_or("");
  o.launcher = text_argument(arg("launcher"), "launcher").value_or("");
  o.root = text_argument(arg("root"), "root", /*path=*/true).value_or("");
  o.experiment = text_argument(arg("experiment"), "experiment").value_or("");
  o.run = text_argument(arg("run_name"), "run_name").value_or("");
  o.strategy = text_argument(arg("strategy"), "strategy").value_or("");
  o.gpu_monitor = text_argument(arg("gpu_monitor"), "gpu_monitor").value_or("");
  // A bad argument or variable (Run(rank=-1), RANK=abc) is a ValueError, raised before any training.
  auto detected = collect::detect_run_context(collect::Environment::from_process(), o);
  if (!detected) throw py::value_error(detected.error().message);
  return std::move(detected).value();
}

// The GPU sampling interval of Run(gpu_interval=...): "1s", "100ms", or a number of seconds; checked
// by the library's parse_interval. Returns the text RankRecorder.open takes.
std::string interval_argument(py::handle value, const char* name) {
  std::string text;
  if (PyUnicode_Check(value.ptr())) {
    text = *text_argument(value, name);
  } else if (!PyBool_Check(value.ptr()) && (PyIndex_Check(value.ptr()) || PyFloat_Check(value.ptr()))) {
    auto number = py::reinterpret_steal<py::object>(PyNumber_Float(value.ptr()));
    if (!number) {  // an integer beyond a double's range
      PyErr_Clear();
      throw py::value_error(fmt::format("{} {} is out of range", name, shown(value)));
    }
    text = fmt::format("{}", PyFloat_AsDouble(number.ptr()));
  } else {
    throw py::type_error(fmt::format("{} must be a str like '1s' or a number of seconds, not {} ({})", name,
                                     type_name(value), shown(value)));
  }
  if (auto parsed = collect::parse_interval(text); !parsed) {
    throw py::value_error(fmt::format("{}: {}", name, parsed.error().message));
  }
  return text;
}

// Blocks SIGXFSZ in this thread for a `with` block (core/file_size_signal.h): for the writes the
// Python side makes for scaleprof (the profiler's traces).
struct FileSizeSignalScope {
  std::optional<scaleprof::FileSizeSignalBlock> block;
};

// --run-names as a list of names or the CLI's comma-separated text.
std::vector<std::string> run_names_argument(const py::object& value) {
  if (value.is_none()) return {};
  if (py::isinstance<py::str>(value)) return scaleprof::pipeline::split_names(value.cast<std::string>());
  return value.cast<std::vector<std::string>>();
}

// The report's options from the arguments both report functions share, named as the CLI's flags; the
// options' own checks (pipeline::check_report_options) are a ValueError, made before anything is read.
scaleprof::pipeline::ReportOptions report_options(const py::object& root,
                                                  const std::optional<std::string>& tracking_uri,
                                                  const std::optional<std::string>& experiment,
                                                  const std::optional<std::string>& experiment_name,
                                                  const py::object& run_names, int skip_epochs, int64_t gpus_per_node,
                                                  unsigned threads, const py::object& what_if) {
  scaleprof::pipeline::ReportOptions options;
  options.spelling = scaleprof::pipeline::OptionSpelling::kPython;
  options.skip_epochs = skip_epochs;
  options.gpus_per_node = gpus_per_node;
  if (auto checked = scaleprof::pipeline::check_report_options(options); !checked) {
    throw py::value_error(utf8_message(checked.error().message));
  }
  options.root = root.is_none() ? std::string() : required_path(root, "root");
  options.tracking_uri = tracking_uri.value_or("");
  options.experiment = experiment.value_or("");
  options.mlflow_experiment = experiment_name.value_or("");
  options.run_names = run_names_argument(run_names);
  options.threads = threads;
  if (!what_if.is_none()) {
    // One text or a list of them, as the CLI's repeated --what-if.
    if (py::isinstance<py::str>(what_if)) {
      options.what_ifs.push_back(what_if.cast<std::string>());
    } else {
      options.what_ifs = what_if.cast<std::vector<std::string>>();
    }
  }
  return options;
}

// Runs the report pipeline without the GIL (the trace stage reads on threads of its own); the
// messages are kept, in order, for the caller.
scaleprof::pipeline::ReportOutcome run_report(const scaleprof::pipeline::ReportOptions& options,
                                              std::vector<std::pair<std::string, std::string>>* messages) {
  std::optional<scaleprof::Error> error;
  scaleprof::pipeline::ReportOutcome outcome;
  {
    py::gil_scoped_release release;
    auto written =
        scaleprof::pipeline::write_report(options, [messages](std::string_view label, std::string_view text) {
          messages->emplace_back(std::string(label), std::string(text));
        });
    if (written) {
      outcome = std::move(written).value();
    } else {
      error = written.error();
    }
  }
  if (error) throw scaleprof::python::error_of(*error);
  return outcome;
}

// `scaleprof report --format json` as a dict: the CLI's pipeline (report_outputs.h, the source chosen
// from the arguments and the environment as the CLI does), and the report's one JSON writer, parsed
// by Python's json module rather than written a second time.
py::object scalability_report(const py::object& root_arg, const std::optional<std::string>& tracking_uri,
                              const std::optional<std::string>& experiment,
                              const std::optional<std::string>& experiment_name, const py::object& run_names,
                              int skip_epochs, int64_t gpus_per_node, unsigned threads, const py::object& what_if) {
  scaleprof::pipeline::ReportOptions options = report_options(root_arg, tracking_uri, experiment, experiment_name,
                                                              run_names, skip_epochs, gpus_per_node, threads, what_if);
  options.format = "json";
  options.keep_text = true;
  options.no_plots = true;
  std::vector<std::pair<std::string, std::string>> messages;  // the dict holds the warnings and errors
  const scaleprof::pipeline::ReportOutcome outcome = run_report(options, &messages);
  return py::module_::import("json").attr("loads")(outcome.text);
}

std::optional<std::string> optional_path(const py::object& value, const char* name) {
  if (value.is_none()) return std::nullopt;
  return required_path(value, name);
}

// `scaleprof report` with its outputs: the tables in `format` (returned as "text", or written to
// `output`), the plots (with plot_dir), the HTML page and its trace pages, itwinai's backup CSV.
py::dict write_scalability_report(const py::object& root, const std::optional<std::string>& tracking_uri,
                                  const std::optional<std::string>& experiment,
                                  const std::optional<std::string>& experiment_name, const py::object& run_names,
                                  int skip_epochs, int64_t gpus_per_node, unsigned threads, const py::object& what_if,
                                  const std::string& format, const py::object& output, const py::object& html,
                                  const py::object& plot_dir, const std::string& plot_file_suffix, bool trace_pages,
                                  const py::object& backup_root_dir, bool include_superseded, bool itwinai,
                                  bool include_communication, bool wide) {
  scaleprof::pipeline::ReportOptions options = report_options(root, tracking_uri, experiment, experiment_name,
                                                              run_names, skip_epochs, gpus_per_node, threads, what_if);
  options.format = format;
  options.plot_suffix = plot_file_suffix;
  if (auto checked = scaleprof::pipeline::check_report_options(options); !checked) {
    throw py::value_error(utf8_message(checked.error().message));
  }
  options.output = optional_path(output, "output").value_or("");
  options.keep_text = true;
  options.html = optional_path(html, "html").value_or("");
  const std::optional<std::string> plots = optional_path(plot_dir, "plot_dir");
  options.no_plots = !plots.has_value();
  if (plots) options.plot_dir = *plots;
  options.no_trace_pages = !trace_pages;
  if (const std::optional<std::string> backup = optional_path(backup_root_dir, "backup_root_dir")) {
    options.do_backup = true;
    options.backup_root_dir = *backup;
  }
  options.include_superseded = include_superseded;
  options.itwinai = itwinai;
  options.include_communication = include_communication;
  options.wide = wide;
  std::vector<std::pair<std::string, std::string>> messages;
  const scaleprof::pipeline::ReportOutcome outcome = run_report(options, &messages);
  py::dict out;
  out["text"] = options.output.empty() ? py::object(py::str(outcome.text)) : py::object(py::none());
  out["plots"] = outcome.plots;
  out["html"] = outcome.html.empty() ? py::object(py::none()) : py::object(py::str(outcome.html));
  out["trace_pages"] = outcome.trace_pages;
  out["backup_dir"] = outcome.backup_dir.empty() ? py::object(py::none()) : py::object(py::str(outcome.backup_dir));
  out["input_errors"] = outcome.input_errors;
  out["plots_failed"] = outcome.plots_failed;
  py::list shown;
  for (const auto& [label, text] : messages) shown.append(py::make_tuple(label, utf8_message(text)));
  out["messages"] = shown;
  return out;
}

}  // namespace

PYBIND11_MODULE(_scaleprof, m) {
  m.doc() = "scaleprof engine (C++): run context, rank recorder, GPU monitor, run-directory reader";
  // scaleprof.ScaleprofError (a RuntimeError) with `kind`, the ErrorKind's name ("not_found", "io",
  // ...; "bad_input" for errors raised in Python). The translator is a plain function, so the type
  // lives in pybind11's once-per-interpreter store, set here and only read after.
  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> error_type;
  error_type.call_once_and_store_result(
      [&]() { return py::object(py::exception<ScaleprofError>(m, "ScaleprofError", PyExc_RuntimeError)); });
  error_type.get_stored().attr("kind") = std::string(scaleprof::error_kind_name(scaleprof::ErrorKind::kBadInput));
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const ScaleprofError& e) {
      const py::object& type = error_type.get_stored();
      py::object error = type(e.what());
      error.attr("kind") = std::string(scaleprof::error_kind_name(e.kind));
      PyErr_SetObject(type.ptr(), error.ptr());
    }
  });
  m.attr("__version__") = SCALEPROF_VERSION;
  scaleprof::python::bind_trace_analysis(m);

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
      "check_record",
      [](const char* what, py::handle index, py::handle samples) {
        const std::string index_name = what;
        auto i = int_argument(index, index_name.c_str());
        auto n = int_argument(samples, "samples");
        if (auto s = collect::check_record_arguments(what, i, n); !s) throw py::value_error(s.error().message);
        return py::make_tuple(i ? py::cast(*i) : py::none(), n ? py::cast(*n) : py::none());
      },
      py::arg("what"), py::arg("index"), py::arg("samples"),
      "Checks and converts an epoch's or a step's index and sample count before the record starts: "
      "(index, samples) as int or None; TypeError or ValueError naming the argument.");
  m.def(
      "check_interval", [](py::handle value, const char* name) { return interval_argument(value, name); },
      py::arg("value"), py::arg("name"), "A GPU sampling interval checked; its text, or ValueError/TypeError.");
  py::class_<FileSizeSignalScope>(m, "FileSizeSignalBlock",
                                  "with-block in which a write past `ulimit -f` fails with EFBIG (OSError) "
                                  "instead of ending the process (this thread only)")
      .def(py::init<>())
      .def("__enter__",
           [](FileSizeSignalScope& s) -> FileSizeSignalScope& {
             s.block.emplace();
             return s;
           })
      .def("__exit__", [](FileSizeSignalScope& s, const py::args&) {
        s.block.reset();
        return false;
      });
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
      // Arguments were converted and checked by check_record before (the Python API does it first).
      .def(
          "begin_epoch",
          [](collect::RankRecorder& r, int64_t epoch, std::optional<int64_t> samples) {
            check(r.begin_epoch(epoch, samples));
          },
          py::arg("epoch"), py::arg("samples") = py::none())
      .def("end_epoch", [](collect::RankRecorder& r) { return epoch_dict(unwrap(r.end_epoch())); })
      .def(
          "begin_step",
          [](collect::RankRecorder& r, std::optional<int64_t> step, std::optional<int64_t> samples) {
            check(r.begin_step(step, samples));
          },
          py::arg("step") = py::none(), py::arg("samples") = py::none())
      .def("end_step", [](collect::RankRecorder& r) { return step_dict(unwrap(r.end_step())); })
      .def("abandon_epoch", &collect::RankRecorder::abandon_epoch)
      .def("abandon_step", &collect::RankRecorder::abandon_step)
      // Monitoring never kills training: a failed final write is reported on stderr by the recorder
      // and counted in rank.json, not raised into the training's exit path.
      .def(
          "finish", [](collect::RankRecorder& r, bool success) { (void)r.finish(success); }, py::arg("success") = true,
          py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("write_errors", &collect::RankRecorder::write_errors)
      .def("note_process_group", &collect::RankRecorder::note_process_group, py::arg("size"), py::arg("by"),
           "Notes the process group the training was seen in; the largest is written to rank.json at finish.")
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
      "read_run",
      [](const py::object& dir) { return run_dict(unwrap(importers::read_run(required_path(dir, "dir")))); },
      py::arg("dir"),
      "One run directory as dicts: status, ranks with epochs, steps, trace files and GPU summaries, warnings.");
  m.def(
      "read_runs",
      [](const py::object& root, const std::string& experiment) {
        py::list out;
        for (const auto& r : unwrap(importers::read_runs(required_path(root, "root"), experiment))) {
          out.append(run_dict(r));
        }
        return out;
      },
      py::arg("root"), py::arg("experiment") = "");
  m.def("scalability_report", &scalability_report, py::arg("root") = py::none(), py::arg("tracking_uri") = py::none(),
        py::arg("experiment") = py::none(), py::arg("experiment_name") = py::none(), py::arg("run_names") = py::none(),
        py::arg("skip_epochs") = 1, py::arg("gpus_per_node") = 0, py::arg("threads") = 0,
        py::arg("what_if") = py::none(),
        "The scalability report `scaleprof report --format json` writes, as a dict; arguments as the CLI's flags "
        "(run_names: a list or comma-separated text; what_if: one --what-if text or a list). ScaleprofError with the "
        "one-line message when nothing can "
        "be read.");
  m.def("write_scalability_report", &write_scalability_report, py::arg("root") = py::none(),
        py::arg("tracking_uri") = py::none(), py::arg("experiment") = py::none(),
        py::arg("experiment_name") = py::none(), py::arg("run_names") = py::none(), py::arg("skip_epochs") = 1,
        py::arg("gpus_per_node") = 0, py::arg("threads") = 0, py::arg("what_if") = py::none(),
        py::arg("format") = "table", py::arg("output") = py::none(), py::arg("html") = py::none(),
        py::arg("plot_dir") = py::none(), py::arg("plot_file_suffix") = ".png", py::arg("trace_pages") = true,
        py::arg("backup_root_dir") = py::none(), py::arg("include_superseded") = false, py::arg("itwinai") = false,
        py::arg("include_communication") = false, py::arg("wide") = false,
        "`scaleprof report` with its outputs, the CLI's pipeline: the tables in `format` ('text' of the result, or "
        "written to `output`), plots into `plot_dir` (none without it), the HTML page `html` with the runs' trace "
        "pages beside it (trace_pages=False: none), a backup CSV under `backup_root_dir`. Returns a dict: text, "
        "plots, html, trace_pages, backup_dir, input_errors, plots_failed, messages ((label, text) in order).");
}
