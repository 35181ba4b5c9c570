// The scalability report's "Straggler Causes" section: each rank's slow steps beside what its GPU's
// clock did in them (analysis/straggler_causes.h). Absent when no run has a rank with slow steps, so
// reports of runs without steps.csv (itwinai's CSVs, MLflow runs) are unchanged.
#pragma once

#include <optional>

#include "report/scalability_report.h"

namespace scaleprof::report {

std::optional<ReportSection> straggler_causes_section(const ScalabilityAnalysis& analysis);

}  // namespace scaleprof::report
