#include "analysis/path_overlay.h"

#include <string>
#include <utility>

namespace scaleprof::analysis {

trace::OverlaySpec critical_path_overlay_spec(const RankCriticalPath& p) {
  trace::OverlaySpec spec;
  spec.base_time_ns = p.base_time_ns;
  for (const StepCriticalPath& s : p.steps) {
    for (const PathEvent& e : s.events) {
      if (e.file_index >= 0 && e.type == PathEdgeType::kOperator) spec.critical.push_back(e.file_index);
      if (e.type != PathEdgeType::kOperator && e.from_file_index >= 0 && e.to_file_index >= 0 &&
          e.from_file_index != e.to_file_index) {
        spec.flows.push_back({e.from_file_index, e.to_file_index, e.from_flow_ns, e.to_flow_ns,
                              std::string(path_edge_type_name(e.type)), e.hta_weight_ns});
      }
      trace::OverlaySlice slice;
      slice.start_ns = e.start_ns;
      slice.end_ns = e.end_ns;
      slice.name = !e.name.empty() ? e.name : std::string(path_gap_name(e.type, e.device));
      if (e.category == PathCategory::kWaitingForGpu && !e.name.empty()) slice.name = "wait for: " + e.name;
      slice.category = std::string(path_category_name(e.category));
      slice.bound_by = std::string(bound_by_name(e.bound_by));
      slice.type = std::string(path_edge_type_name(e.type));
      slice.hta_weight_ns = e.hta_weight_ns;
      slice.window = s.step;
      if (slice.end_ns > slice.start_ns) spec.slices.push_back(std::move(slice));
    }
  }
  return spec;
}

}  // namespace scaleprof::analysis
