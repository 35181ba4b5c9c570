// The binding of the `scaleprof trace` reports for scaleprof.TraceAnalysis (python/scaleprof/analysis.py).
#pragma once

#include <pybind11/pybind11.h>

namespace scaleprof::python {

// Adds trace_report() to the module: the tables of one `scaleprof trace` subcommand as columns.
void bind_trace_analysis(pybind11::module_& m);

}  // namespace scaleprof::python
