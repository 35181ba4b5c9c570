// trace_report(): the tables of one `scaleprof trace` subcommand, computed by the same pipeline the CLI
// runs (pipeline::stream_report), handed to Python column by column: numbers as one numpy array per
// column, names as one list of str per column, never one Python object per row. The DataFrames are
// assembled from them in python/scaleprof/analysis.py.
//
// Every argument arrives as a plain Python object and is checked here, so that a wrong type or value
// is a ValueError naming the argument, never pybind11's cast error listing the overloads.
#include "trace_analysis_binding.h"

#include <pybind11/numpy.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "binding_errors.h"
#include "path_argument.h"
#include "pipeline/hta_extras_pipeline.h"
#include "pipeline/trace_diff_pipeline.h"
#include "pipeline/trace_pipeline.h"
#include "pipeline/whatif_pipeline.h"
#include "report/table.h"

namespace py = pybind11;

namespace scaleprof::python {
namespace {

// The subcommands whose tables trace_report() gives (every `scaleprof trace` report but diff and merge).
constexpr std::string_view kReports[] = {
    "summary", "breakdown", "kernels", "idle", "overlap", "launch", "ops", "steps", "collectives", "stragglers",
    "phases", "decompose", "memory", "critical-path",
    // Issue 23: counters, and their step functions.
    "counters", "counters_series", "flops",
    // Issue 33: exposed collectives per group, phase and FSDP layer; pipeline bubbles.
    "fsdp", "pipeline"};

[[noreturn]] void bad_argument(std::string_view name, const std::string& what) {
  throw py::value_error(fmt::format("{}: {}", name, what));
}

// Runs `call` (a pipeline function) with the GIL released: the ranks are read and analysed on the
// engine's own threads, and the notebook's other Python threads go on meanwhile.
template <typename Call>
auto without_gil(Call&& call) {
  std::optional<decltype(call())> result;
  {
    py::gil_scoped_release release;
    result.emplace(call());
  }
  return std::move(*result);
}

// A rank the caller asked for that no trace holds is the caller's mistake, not an empty result.
void require_ranks_read(bool none_read, const std::vector<int64_t>& ranks) {
  if (none_read && !ranks.empty()) {
    throw py::value_error(fmt::format("rank: {} is not among the ranks read", fmt::join(ranks, ", ")));
  }
}

std::string type_name(py::handle value) {
  return py::str(py::type::of(value).attr("__name__"));
}

bool is_int(py::handle value) {
  // bool is an int in Python, but ranks=[True] is a mistake, not rank 1.
  return PyIndex_Check(value.ptr()) != 0 && !PyBool_Check(value.ptr()) && !py::isinstance<py::float_>(value);
}

int64_t int_argument(py::handle value, std::string_view name, int64_t min, int64_t max) {
  if (!is_int(value)) bad_argument(name, fmt::format("expected an integer, got {}", type_name(value)));
  // __index__ of a numpy integer or a Python int; too large for int64 is out of range below. An array
  // has __index__ too, which fails unless it holds one integer.
  PyObject* index = PyNumber_Index(value.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    bad_argument(name, fmt::format("expected an integer, got {}", type_name(value)));
  }
  const py::int_ number = py::reinterpret_steal<py::int_>(index);
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (overflow != 0 || v < min || v > max) {
    bad_argument(name, fmt::format("must be between {} and {}, got {}", min, max, py::str(value).cast<std::string>()));
  }
  return v;
}

double float_argument(py::handle value, std::string_view name, double min, double max) {
  if (PyBool_Check(value.ptr()) || (!py::isinstance<py::float_>(value) && !is_int(value))) {
    bad_argument(name, fmt::format("expected a number, got {}", type_name(value)));
  }
  // An array passes the checks above (it has __index__) but is a number only when it holds one.
  PyObject* number = PyNumber_Float(value.ptr());
  if (number == nullptr) {
    PyErr_Clear();
    bad_argument(name, fmt::format("expected a number, got {}", type_name(value)));
  }
  const double v = py::reinterpret_steal<py::float_>(number).cast<double>();
  if (!(v >= min && v <= max)) bad_argument(name, fmt::format("must be between {} and {}, got {}", min, max, v));
  return v;
}

bool bool_argument(py::handle value, std::string_view name) {
  // numpy.bool_ too, without importing numpy for it.
  const bool numpy_bool = py::str(py::type::of(value).attr("__module__")).cast<std::string>() == "numpy" &&
                          type_name(value).rfind("bool", 0) == 0;
  if (!PyBool_Check(value.ptr()) && !numpy_bool) {
    bad_argument(name, fmt::format("expected True or False, got {}", type_name(value)));
  }
  return value.cast<bool>();
}

std::string str_argument(py::handle value, std::string_view name) {
  if (!py::isinstance<py::str>(value)) bad_argument(name, fmt::format("expected a str, got {}", type_name(value)));
  return value.cast<std::string>();
}

// A list, tuple, range or 1-d array of items; a str (a sequence of characters) is not one.
std::vector<py::object> items_of(py::handle value, std::string_view name) {
  if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) || py::isinstance<py::dict>(value) ||
      !py::isinstance<py::iterable>(value)) {
    bad_argument(name, fmt::format("expected a list, got {}", type_name(value)));
  }
  std::vector<py::object> out;
  try {
    for (py::handle item : value) out.push_back(py::reinterpret_borrow<py::object>(item));
  } catch (const py::error_already_set&) {  // a 0-d array is iterable by type, not in fact
    bad_argument(name, fmt::format("expected a list, got {}", type_name(value)));
  }
  return out;
}

std::vector<int64_t> ranks_argument(py::handle value, std::string_view name) {
  std::vector<int64_t> out;
  if (value.is_none()) return out;
  size_t i = 0;
  for (const py::object& item : items_of(value, name)) {
    out.push_back(int_argument(item, fmt::format("{}[{}]", name, i++), 0, std::numeric_limits<int32_t>::max()));
  }
  return out;
}

// One path: str, bytes or os.PathLike as its bytes, NUL refused (path_argument.h, the one conversion).
std::string one_path(py::handle value, const std::string& name) {
  std::optional<std::string> path = path_argument(value, name);
  if (!path) bad_argument(name, fmt::format("expected a path (str or os.PathLike), got {}", type_name(value)));
  return *path;
}

std::vector<std::string> paths_argument(py::handle value, std::string_view name) {
  std::vector<std::string> out;
  size_t i = 0;
  for (const py::object& item : items_of(value, name)) out.push_back(one_path(item, fmt::format("{}[{}]", name, i++)));
  return out;
}

// One column of a table as Python data.
py::object column_object(const std::vector<report::Cell>& cells) {
  bool any_text = false;
  bool any_real = false;
  for (const report::Cell& c : cells) {
    any_text |= std::holds_alternative<std::string>(c.value);
    any_real |= std::holds_alternative<double>(c.value) || std::holds_alternative<std::monostate>(c.value);
  }
  if (any_text) {
    py::list out(cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
      if (const auto* s = std::get_if<std::string>(&cells[i].value)) {
        // Names come from trace files: invalid UTF-8 is replaced, never an exception.
        out[i] = py::reinterpret_steal<py::object>(
            PyUnicode_DecodeUTF8(s->data(), static_cast<Py_ssize_t>(s->size()), "replace"));
      } else if (const auto* n = std::get_if<int64_t>(&cells[i].value)) {
        out[i] = py::str(std::to_string(*n));
      } else {
        out[i] = py::none();
      }
    }
    return out;
  }
  if (any_real || cells.empty()) {
    py::array_t<double> out(static_cast<py::ssize_t>(cells.size()));
    auto v = out.mutable_unchecked<1>();
    for (size_t i = 0; i < cells.size(); ++i) {
      const auto& value = cells[i].value;
      if (const auto* d = std::get_if<double>(&value)) {
        v(static_cast<py::ssize_t>(i)) = *d;
      } else if (const auto* n = std::get_if<int64_t>(&value)) {
        v(static_cast<py::ssize_t>(i)) = static_cast<double>(*n);
      } else {
        v(static_cast<py::ssize_t>(i)) = std::numeric_limits<double>::quiet_NaN();
      }
    }
    return out;
  }
  py::array_t<int64_t> out(static_cast<py::ssize_t>(cells.size()));
  auto v = out.mutable_unchecked<1>();
  for (size_t i = 0; i < cells.size(); ++i) v(static_cast<py::ssize_t>(i)) = std::get<int64_t>(cells[i].value);
  return out;
}

// {column key: array or list}, in the table's column order; JSON-only columns (nested lists) are left out.
py::dict table_columns(const report::Table& table) {
  std::vector<size_t> kept;
  for (size_t c = 0; c < table.columns.size(); ++c) {
    if (!table.columns[c].json_only) kept.push_back(c);
  }
  std::vector<std::vector<report::Cell>> columns(kept.size());
  table.for_each_row([&](const std::vector<report::Cell>& row) {
    for (size_t k = 0; k < kept.size(); ++k) columns[k].push_back(kept[k] < row.size() ? row[kept[k]] : report::Cell());
  });
  py::dict out;
  for (size_t k = 0; k < kept.size(); ++k) {
    out[py::str(table.columns[kept[k]].key)] = column_object(columns[k]);
    columns[k] = {};  // each column freed once converted
  }
  return out;
}

py::list string_list(const std::vector<std::string>& lines) {
  py::list out;
  for (const std::string& s : lines) {
    out.append(py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace")));
  }
  return out;
}

// The files of `paths` and `rank_files` ({rank: file}) as trace_report() takes them, into `load`.
std::vector<std::string> trace_inputs(py::handle paths_arg, py::handle rank_files_arg, py::handle threads_arg,
                                      trace::LoadOptions* load) {
  std::vector<std::string> paths = paths_argument(paths_arg, "trace_dir");
  load->parse.lenient = true;
  load->threads = static_cast<unsigned>(int_argument(threads_arg, "threads", 0, 1024));
  if (!rank_files_arg.is_none()) {
    if (!py::isinstance<py::dict>(rank_files_arg)) {
      bad_argument("trace_files", fmt::format("expected a dict of rank to file, got {}", type_name(rank_files_arg)));
    }
    for (auto [rank, file] : py::reinterpret_borrow<py::dict>(rank_files_arg)) {
      const int64_t r = int_argument(rank, "trace_files (a rank)", 0, std::numeric_limits<int32_t>::max());
      const std::string p = one_path(file, fmt::format("trace_files[{}]", r));
      load->rank_overrides.emplace_back(p, r);
      paths.push_back(p);
    }
  }
  if (paths.empty()) bad_argument("trace_dir", "no trace file or folder given");
  return paths;
}

py::dict trace_report(py::handle report_arg, py::handle paths_arg, py::handle rank_files_arg, py::handle ranks_arg,
                      py::handle top_arg, py::handle duration_ratio_arg, py::handle delay_arg,
                      py::handle include_last_step_arg, py::handle sort_by_arg, py::handle threads_arg,
                      py::handle launch_top_arg, py::handle max_queue_length_arg, py::handle deepspeed_profile_arg,
                      py::handle deepspeed_forwards_arg, py::handle path_annotation_arg, py::handle path_instance_arg,
                      py::handle path_events_arg, py::handle path_overlay_arg, py::handle align_arg) {
  const std::string report = str_argument(report_arg, "report");
  if (std::find(std::begin(kReports), std::end(kReports), report) == std::end(kReports)) {
    bad_argument("report", fmt::format("unknown report '{}'", report));
  }
  pipeline::TraceReportRequest request;
  request.report = report;
  request.paths = trace_inputs(paths_arg, rank_files_arg, threads_arg, &request.load);
  const std::vector<std::string>& paths = request.paths;
  auto& options = request.options;
  options.ranks = ranks_argument(ranks_arg, "ranks");
  options.top = static_cast<int>(int_argument(top_arg, "num_kernels", 0, std::numeric_limits<int32_t>::max()));
  if (!launch_top_arg.is_none()) {
    options.launch_top =
        static_cast<int>(int_argument(launch_top_arg, "launch_top", 0, std::numeric_limits<int32_t>::max()));
  }
  options.kernel_duration_ratio = float_argument(duration_ratio_arg, "duration_ratio", 0.0, 1.0);
  const double delay_us = float_argument(delay_arg, "consecutive_kernel_delay", 0.0, 1e9);
  options.consecutive_kernel_delay_ns = std::llround(delay_us * 1000.0);
  options.include_last_step = bool_argument(include_last_step_arg, "include_last_profiler_step");
  options.sort_by = str_argument(sort_by_arg, "sort_by");
  if (!pipeline::known_operator_sort_key(options.sort_by)) {
    bad_argument("sort_by", fmt::format("must be self_cpu, cpu_total, self_device, device_total or calls, got '{}'",
                                        options.sort_by));
  }

  // None: the limit found in the trace (analysis::find_queue_limit).
  if (!max_queue_length_arg.is_none()) {
    options.max_queue_length = int_argument(max_queue_length_arg, "max_queue_length", 1, int64_t{1} << 30);
  }
  // `trace flops --deepspeed-profile` (issue 31): the file is read by the pipeline.
  if (!deepspeed_profile_arg.is_none()) {
    if (report != "flops") bad_argument("deepspeed_profile", "is for the flops report only");
    options.deepspeed_profile = one_path(deepspeed_profile_arg, "deepspeed_profile");
  }
  options.deepspeed_forwards = int_argument(deepspeed_forwards_arg, "deepspeed_forwards", 1, int64_t{1} << 40);
  // The critical path's windows (HTA's annotation and instance_id: N or (first, last)), its edges, and
  // the overlay traces' folder.
  options.path_window.annotation = str_argument(path_annotation_arg, "annotation");
  if (py::isinstance<py::tuple>(path_instance_arg)) {
    const auto pair = path_instance_arg.cast<py::tuple>();
    if (pair.size() != 2) bad_argument("instance_id", "a tuple is (first, last)");
    options.path_window.first = int_argument(pair[0], "instance_id", 0, int64_t{1} << 62);
    options.path_window.last = int_argument(pair[1], "instance_id", options.path_window.first, int64_t{1} << 62);
  } else if (!path_instance_arg.is_none()) {
    options.path_window.first = options.path_window.last =
        int_argument(path_instance_arg, "instance_id", 0, int64_t{1} << 62);
  }
  options.path_events = bool_argument(path_events_arg, "path_events");
  options.align_clocks = bool_argument(align_arg, "align");
  if (!path_overlay_arg.is_none()) options.path_overlay_dir = one_path(path_overlay_arg, "output_dir");
  const bool path_options = options.path_window.annotation != "ProfilerStep" || options.path_window.first >= 0 ||
                            options.path_events || !options.path_overlay_dir.empty();
  if (path_options && report != "critical-path") {
    bad_argument("annotation", "annotation, instance_id, path_events and output_dir are for critical-path only");
  }

  Result<pipeline::StreamedReport> streamed = without_gil([&] { return pipeline::run_trace_report(request); });
  pipeline::StreamedReport result = unwrap(std::move(streamed));
  // A notebook wants all of its traces or a clear reason: an unreadable file is an error (the CLI goes
  // on with the others and exits 3), each line naming the file and the place in it.
  if (!result.set.errors.empty() || !result.any_read) {
    std::string message = result.any_read ? "some traces could not be read" : "no trace could be read";
    for (const Diagnostic& e : result.set.errors) message += "\n  " + e.text();
    if (result.set.files.empty()) message += fmt::format(" (no trace file in {})", fmt::join(paths, ", "));
    throw ScaleprofError(utf8_message(message));
  }
  py::list ranks_read;
  for (int64_t r : result.set.rank_of_file) {
    if (r >= 0) ranks_read.append(r);
  }
  if (!result.any_selected) {
    throw py::value_error(fmt::format("ranks: {} matches none of the ranks read ({})", fmt::join(options.ranks, ", "),
                                      py::str(ranks_read).cast<std::string>()));
  }
  py::dict tables;
  for (size_t i = 0; i < result.report.tables.size(); ++i) {
    tables[py::str(result.report.keys[i])] = table_columns(result.report.tables[i]);
  }
  py::dict out;
  out["tables"] = tables;
  out["files"] = string_list(result.set.files);
  out["ranks"] = ranks_read;
  out["warnings"] = string_list(texts(result.set.warnings));
  out["notes"] = string_list(result.repair_notes);
  out["overlays"] = string_list(result.overlays);
  return out;
}

// `scaleprof trace what-if` over `paths`: {'tables': {'what_if': {column: values}}, 'files', 'warnings'}.
// (`what_ifs` arrives as a Python object: this file binds without pybind11/stl.h, so a
// std::vector<std::string> parameter had no conversion and every call failed with a TypeError.)
py::dict trace_what_if(py::handle paths_arg, py::handle what_ifs_arg, unsigned threads) {
  const std::vector<std::string> paths = paths_argument(paths_arg, "paths");
  std::vector<std::string> what_ifs;
  if (py::isinstance<py::str>(what_ifs_arg)) {
    what_ifs.push_back(what_ifs_arg.cast<std::string>());
  } else if (py::isinstance<py::list>(what_ifs_arg) || py::isinstance<py::tuple>(what_ifs_arg)) {
    for (py::handle h : what_ifs_arg) {
      if (!py::isinstance<py::str>(h)) throw py::value_error("what_ifs: every change is text, e.g. 'rank 1 at median'");
      what_ifs.push_back(h.cast<std::string>());
    }
  } else {
    throw py::value_error("what_ifs: a change as text or a list of them, e.g. ['rank 1 at median']");
  }
  trace::LoadOptions load;
  load.parse.lenient = true;
  load.threads = threads;
  Result<pipeline::TraceWhatIf> result = without_gil([&] { return pipeline::trace_what_if(paths, what_ifs, load); });
  if (!result.ok() && result.error().kind == ErrorKind::kUsage) throw py::value_error(result.error().message);
  pipeline::TraceWhatIf w = unwrap(std::move(result));
  if (!w.read.set.errors.empty()) {
    std::string message = "some traces could not be read";
    for (const Diagnostic& e : w.read.set.errors) message += "\n  " + e.text();
    throw ScaleprofError(utf8_message(message));
  }
  py::dict tables;
  for (size_t i = 0; i < w.report.tables.size(); ++i) {
    tables[py::str(w.report.keys[i])] = table_columns(w.report.tables[i]);
  }
  py::dict out;
  out["tables"] = tables;
  out["files"] = string_list(w.read.set.files);
  out["warnings"] = string_list(texts(w.read.set.warnings));
  return out;
}

// A notebook wants all of its traces or a clear reason: an unreadable file is an error.
void check_read(const trace::StreamedSet& set) {
  if (set.errors.empty()) return;
  std::string message = "some traces could not be read";
  for (const Diagnostic& e : set.errors) message += "\n  " + e.text();
  throw ScaleprofError(utf8_message(message));
}

py::dict tables_dict(const report::TraceReport& report) {
  py::dict tables;
  for (size_t i = 0; i < report.tables.size(); ++i) tables[py::str(report.keys[i])] = table_columns(report.tables[i]);
  return tables;
}

// `scaleprof trace potential-stragglers`: {'tables', 'stragglers' (HTA's list), 'note', 'warnings'}.
py::dict trace_potential_stragglers(py::handle paths_arg, py::handle rank_files_arg, py::handle steps_arg,
                                    py::handle num_candidates_arg, py::handle include_last_step_arg,
                                    py::handle threads_arg) {
  trace::LoadOptions load;
  const std::vector<std::string> paths = trace_inputs(paths_arg, rank_files_arg, threads_arg, &load);
  analysis::PotentialStragglerOptions options;
  if (!steps_arg.is_none()) options.profiler_steps = ranks_argument(steps_arg, "profiler_steps");
  // HTA takes any integer and counts one below 1 as 1.
  options.num_candidates =
      std::max<int64_t>(1, int_argument(num_candidates_arg, "num_candidates", std::numeric_limits<int32_t>::min(),
                                        std::numeric_limits<int32_t>::max()));
  const bool include_last_step = bool_argument(include_last_step_arg, "include_last_profiler_step");
  Result<pipeline::PotentialStragglersReport> result =
      without_gil([&] { return pipeline::potential_stragglers_report(paths, load, options, include_last_step); });
  if (!result.ok() && result.error().kind == ErrorKind::kUsage) throw py::value_error(result.error().message);
  pipeline::PotentialStragglersReport r = unwrap(std::move(result));
  check_read(r.set);
  py::list stragglers;
  for (int64_t rank : r.result.stragglers) stragglers.append(rank);
  py::dict out;
  out["tables"] = tables_dict(r.report);
  out["stragglers"] = stragglers;
  out["note"] = py::str(r.result.note);
  out["warnings"] = string_list(texts(r.set.warnings));
  return out;
}

// `scaleprof trace kernel-sequences`: {'tables', 'warnings'}.
py::dict trace_kernel_sequences(py::handle paths_arg, py::handle rank_files_arg, py::handle operator_arg,
                                py::handle min_pattern_len_arg, py::handle ranks_arg, py::handle include_last_step_arg,
                                py::handle threads_arg) {
  trace::LoadOptions load;
  const std::vector<std::string> paths = trace_inputs(paths_arg, rank_files_arg, threads_arg, &load);
  analysis::KernelSequenceOptions options;
  options.operator_name = str_argument(operator_arg, "operator_name");
  if (options.operator_name.empty()) bad_argument("operator_name", "must name an operator (a non-empty string)");
  options.min_pattern_len = int_argument(min_pattern_len_arg, "min_pattern_len", 0, int64_t{1} << 30);
  options.include_last_step = bool_argument(include_last_step_arg, "include_last_profiler_step");
  const std::vector<int64_t> ranks = ranks_argument(ranks_arg, "rank");
  Result<pipeline::KernelSequencesReport> result =
      without_gil([&] { return pipeline::kernel_sequences_report(paths, load, options, ranks); });
  pipeline::KernelSequencesReport r = unwrap(std::move(result));
  check_read(r.set);
  require_ranks_read(r.ranks.empty(), ranks);
  py::dict out;
  out["tables"] = tables_dict(r.report);
  out["warnings"] = string_list(texts(r.set.warnings));
  return out;
}

// `scaleprof trace annotations --kernels`: {'tables', 'warnings'}.
py::dict trace_annotated_kernels(py::handle paths_arg, py::handle rank_files_arg, py::handle ranks_arg,
                                 py::handle include_last_step_arg, py::handle threads_arg) {
  trace::LoadOptions load;
  const std::vector<std::string> paths = trace_inputs(paths_arg, rank_files_arg, threads_arg, &load);
  const bool include_last_step = bool_argument(include_last_step_arg, "include_last_profiler_step");
  const std::vector<int64_t> ranks = ranks_argument(ranks_arg, "rank");
  Result<pipeline::AnnotatedKernelsReport> result =
      without_gil([&] { return pipeline::annotated_kernels_report(paths, load, include_last_step, ranks); });
  pipeline::AnnotatedKernelsReport r = unwrap(std::move(result));
  check_read(r.set);
  require_ranks_read(r.ranks.empty(), ranks);
  py::dict out;
  out["tables"] = tables_dict(r.report);
  out["warnings"] = string_list(texts(r.set.warnings));
  return out;
}

// `scaleprof trace annotations`: {'tables', 'present' (a rank has such spans), 'warnings'}.
py::dict trace_annotation_breakdown(py::handle paths_arg, py::handle rank_files_arg, py::handle use_gpu_arg,
                                    py::handle duration_ratio_arg, py::handle num_kernels_arg, py::handle allowlist_arg,
                                    py::handle include_last_step_arg, py::handle threads_arg) {
  trace::LoadOptions load;
  const std::vector<std::string> paths = trace_inputs(paths_arg, rank_files_arg, threads_arg, &load);
  analysis::AnnotationBreakdownOptions options;
  options.use_gpu_annotation = bool_argument(use_gpu_arg, "use_gpu_annotation");
  options.duration_ratio = float_argument(duration_ratio_arg, "duration_ratio", 0.0, 1.0);
  options.num_kernels = int_argument(num_kernels_arg, "num_kernels", 0, int64_t{1} << 40);
  if (!allowlist_arg.is_none()) {
    options.has_allowlist = true;
    size_t i = 0;
    for (const py::object& item : items_of(allowlist_arg, "allowlist_patterns")) {
      options.allowlist.push_back(str_argument(item, fmt::format("allowlist_patterns[{}]", i++)));
    }
  }
  options.include_last_step = bool_argument(include_last_step_arg, "include_last_profiler_step");
  Result<pipeline::AnnotationBreakdownReport> result =
      without_gil([&] { return pipeline::annotation_breakdown_report(paths, load, options, {}); });
  pipeline::AnnotationBreakdownReport r = unwrap(std::move(result));
  check_read(r.set);
  bool present = false;
  for (const analysis::RankAnnotationBreakdown& rank : r.ranks) present |= rank.present;
  py::dict out;
  out["tables"] = tables_dict(r.report);
  out["present"] = present;
  out["warnings"] = string_list(texts(r.set.warnings));
  return out;
}

// `scaleprof trace cupti-counters`: {'tables', 'errors' ({rank: why it has no result}), 'warnings'}.
py::dict trace_cupti_counters(py::handle paths_arg, py::handle rank_files_arg, py::handle ranks_arg,
                              py::handle include_last_step_arg, py::handle threads_arg) {
  trace::LoadOptions load;
  const std::vector<std::string> paths = trace_inputs(paths_arg, rank_files_arg, threads_arg, &load);
  const bool include_last_step = bool_argument(include_last_step_arg, "include_last_profiler_step");
  const std::vector<int64_t> ranks = ranks_argument(ranks_arg, "ranks");
  Result<pipeline::CuptiCountersReport> result =
      without_gil([&] { return pipeline::cupti_counters_report(paths, load, include_last_step, ranks); });
  pipeline::CuptiCountersReport r = unwrap(std::move(result));
  check_read(r.set);
  py::dict errors;
  for (const analysis::RankCuptiCounters& rank : r.ranks) {
    if (!rank.error.empty()) errors[py::int_(rank.rank)] = py::str(rank.error);
  }
  py::dict out;
  out["tables"] = tables_dict(r.report);
  out["errors"] = errors;
  out["warnings"] = string_list(texts(r.set.warnings));
  return out;
}

// `scaleprof trace diff A B` (pipeline::diff_report): {'tables': {key: {column: values}}, 'problems',
// 'warnings'}. A side that cannot be listed or read is a ScaleprofError naming the side.
py::dict trace_diff(py::handle a_arg, py::handle b_arg, py::handle warmup_arg, py::handle include_last_step_arg,
                    py::handle threads_arg) {
  const std::string a = one_path(a_arg, "control");
  const std::string b = one_path(b_arg, "test");
  pipeline::DiffOptions options;
  options.summary.warmup_steps = int_argument(warmup_arg, "warmup", 0, int64_t{1} << 30);
  options.summary.include_last_step = bool_argument(include_last_step_arg, "include_last_profiler_step");
  trace::LoadOptions load;
  load.parse.lenient = true;
  load.threads = static_cast<unsigned>(int_argument(threads_arg, "threads", 0, 1024));
  Result<pipeline::DiffReport> result = without_gil([&] { return pipeline::diff_report(a, b, load, options); });
  pipeline::DiffReport d = unwrap(std::move(result));
  std::string message;
  for (const pipeline::DiffSideRead* side : {&d.a, &d.b}) {
    for (const Diagnostic& e : side->set.errors) message += "\n  " + side->info.label + ": " + e.text();
  }
  if (!message.empty() || !d.complete) {
    for (const Diagnostic& p : d.problems) {
      if (p.severity == Severity::kError) message += "\n  " + p.text();
    }
    throw ScaleprofError(utf8_message("some traces could not be read" + message));
  }
  std::vector<std::string> problems;
  std::vector<std::string> warnings;
  for (const Diagnostic& p : d.problems) problems.push_back(p.text());
  for (const pipeline::DiffSideRead* side : {&d.a, &d.b}) {
    for (const Diagnostic& w : side->set.warnings) warnings.push_back(side->info.label + ": " + w.text());
  }
  py::dict tables;
  for (size_t i = 0; i < d.report.tables.size(); ++i) {
    tables[py::str(d.report.keys[i])] = table_columns(d.report.tables[i]);
  }
  py::dict out;
  out["tables"] = tables;
  out["problems"] = string_list(problems);
  out["warnings"] = string_list(warnings);
  return out;
}

}  // namespace

void bind_trace_analysis(py::module_& m) {
  m.def("trace_potential_stragglers", &trace_potential_stragglers, py::arg("paths"), py::arg("rank_files") = py::none(),
        py::arg("profiler_steps") = py::none(), py::arg("num_candidates") = 2, py::arg("include_last_step") = false,
        py::arg("threads") = 0,
        "`scaleprof trace potential-stragglers`: HTA's get_potential_stragglers as {'tables', 'stragglers', "
        "'note', 'warnings'}; ValueError for steps not analysed.");
  m.def("trace_kernel_sequences", &trace_kernel_sequences, py::arg("paths"), py::arg("rank_files") = py::none(),
        py::arg("operator_name") = "", py::arg("min_pattern_len") = 3, py::arg("ranks") = py::none(),
        py::arg("include_last_step") = false, py::arg("threads") = 0,
        "`scaleprof trace kernel-sequences`: HTA's get_frequent_cuda_kernel_sequences as {'tables', 'warnings'}.");
  m.def("trace_annotated_kernels", &trace_annotated_kernels, py::arg("paths"), py::arg("rank_files") = py::none(),
        py::arg("ranks") = py::none(), py::arg("include_last_step") = false, py::arg("threads") = 0,
        "`scaleprof trace annotations --kernels`: HTA's get_gpu_kernels_with_user_annotations as {'tables', "
        "'warnings'}.");
  m.def("trace_annotation_breakdown", &trace_annotation_breakdown, py::arg("paths"), py::arg("rank_files") = py::none(),
        py::arg("use_gpu_annotation") = true, py::arg("duration_ratio") = 0.8, py::arg("num_kernels") = 1000,
        py::arg("allowlist_patterns") = py::none(), py::arg("include_last_step") = false, py::arg("threads") = 0,
        "`scaleprof trace annotations`: HTA's get_gpu_user_annotation_breakdown as {'tables', 'present', "
        "'warnings'}.");
  m.def("trace_cupti_counters", &trace_cupti_counters, py::arg("paths"), py::arg("rank_files") = py::none(),
        py::arg("ranks") = py::none(), py::arg("include_last_step") = false, py::arg("threads") = 0,
        "`scaleprof trace cupti-counters`: HTA's get_cupti_counter_data_with_operators as {'tables', 'errors', "
        "'warnings'}.");
  m.def("trace_diff", &trace_diff, py::arg("control"), py::arg("test"), py::arg("warmup") = 1,
        py::arg("include_last_step") = false, py::arg("threads") = 0,
        "`scaleprof trace diff CONTROL TEST` (docs/trace-diff.md): every table, ops_diff included, as "
        "{'tables': {key: {column: numpy array or list of str}}, 'problems', 'warnings'}; ScaleprofError "
        "for a side that cannot be read.");
  m.def("trace_what_if", &trace_what_if, py::arg("paths"), py::arg("what_ifs"), py::arg("threads") = 0,
        "`scaleprof trace what-if`: every rank's profiled steps re-timed under each change (docs/report.md, "
        "\"What fixing a cause would gain\"); ValueError for a change not understood or a bad path.");
  m.def(
      "fs_path", [](py::handle value, const std::string& name) { return py::bytes(one_path(value, name)); },
      py::arg("value"), py::arg("name"),
      "A path argument as the bindings take it (path_argument.h): its os.fsencode bytes; ValueError naming "
      "`name` for a NUL byte or a value that is not a path. TraceAnalysis checks its paths with it first.");
  m.def("trace_report", &trace_report, py::arg("report"), py::arg("paths"), py::arg("rank_files") = py::none(),
        py::arg("ranks") = py::none(), py::arg("top") = 10, py::arg("duration_ratio") = 1.0,
        py::arg("consecutive_kernel_delay_us") = 30, py::arg("include_last_step") = false,
        py::arg("sort_by") = "self_cpu", py::arg("threads") = 0, py::arg("launch_top") = py::none(),
        py::arg("max_queue_length") = py::none(), py::arg("deepspeed_profile") = py::none(),
        py::arg("deepspeed_forwards") = 1, py::arg("annotation") = "ProfilerStep", py::arg("instance_id") = py::none(),
        py::arg("path_events") = false, py::arg("output_dir") = py::none(), py::arg("align") = true,
        "The tables of `scaleprof trace REPORT` over the trace files of `paths` (files or folders) and "
        "`rank_files` ({rank: file}), as {'tables': {key: {column: numpy array or list of str}}, 'files', "
        "'ranks', 'warnings', 'notes'}. `launch_top`: rows of the launch-delay table (None: `top`, 0: every "
        "launch). `deepspeed_profile` (flops only): a DeepSpeed flops profiler output shown beside the trace's FLOPs, "
        "over `deepspeed_forwards` forward passes. critical-path only: `annotation` and `instance_id` (N or "
        "(first, last)) choose the windows as `--annotation`/`--instance` do, `path_events` adds every edge, "
        "`output_dir` writes the overlay traces (their paths in 'overlays'). `align` False: collectives and "
        "stragglers on each host's raw clock (`--no-align`). ValueError names a bad argument; "
        "ScaleprofError an unreadable "
        "trace or profile.");
}

}  // namespace scaleprof::python
