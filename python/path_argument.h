// The one conversion of a Python path argument into the bytes the library opens, used by every binding
// that takes a path (Run's root, read_run, read_runs, scalability_report, TraceAnalysis' files and
// folders). A path is a str, bytes or os.PathLike, encoded with os.fsencode: a str holding undecodable
// bytes as surrogates (what os.listdir gives for a non-UTF-8 name) becomes the name's own bytes, where
// pybind11's std::string cast failed with its raw "Unable to cast". A NUL byte is refused (the name
// would have been cut there and another file opened).
#pragma once

#include <fmt/format.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <string_view>

namespace scaleprof::python {

// The path's bytes; nullopt when `value` is not a str, bytes or os.PathLike (the caller names the
// type in its own words: TypeError in the recording API, ValueError in TraceAnalysis, as each does for
// every argument). ValueError "NAME contains a NUL byte" for a NUL.
inline std::optional<std::string> path_argument(pybind11::handle value, std::string_view name) {
  namespace py = pybind11;
  const bool text = PyUnicode_Check(value.ptr()) || PyBytes_Check(value.ptr());
  if (!text && !PyObject_HasAttrString(value.ptr(), "__fspath__")) return std::nullopt;
  py::object encoded;
  try {
    encoded = py::module_::import("os").attr("fsencode")(value);  // os.fspath first, then the encoding
  } catch (const py::error_already_set& e) {
    if (e.matches(PyExc_TypeError)) return std::nullopt;  // __fspath__ returned neither str nor bytes
    throw;
  }
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(encoded.ptr(), &data, &size) != 0) throw py::error_already_set();
  std::string out(data, static_cast<size_t>(size));
  if (out.find('\0') != std::string::npos) throw py::value_error(fmt::format("{} contains a NUL byte", name));
  return out;
}

}  // namespace scaleprof::python
