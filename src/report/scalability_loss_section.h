// The "Where Scaling Is Lost" section of the scalability report (report/scalability_report.h): the
// efficiency lost between each strategy's smallest scale and each larger one, cause by cause (its parts:
// the all-to-all imbalance and FSDP's exposed collectives inside communication; the pipeline bubble beside
// its ideal), what fixing each would gain, the user's what-ifs, the model's projection and the best
// strategy per scale. Split from scalability_report.cc, which assembles the sections.
#pragma once

#include <optional>

#include "report/scalability_report.h"

namespace scaleprof::report {

// The section, or nullopt when no series has a loss and no scale a best strategy.
std::optional<ReportSection> scaling_loss_section(const ScalabilityAnalysis& a);

}  // namespace scaleprof::report
