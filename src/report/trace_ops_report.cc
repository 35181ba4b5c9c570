// Placeholder until the analysis lands; replaced by the real report.
#include "report/trace_report.h"

namespace scaleprof::report {

TraceReport ops_report(const trace::TraceSet& set, const TraceReportOptions& options) { return {}; }

}  // namespace scaleprof::report
