// What the overlay trace (trace/trace_overlay.h, `trace critical-path --overlay`) draws of one rank's
// critical paths: the events on the path marked, its dependency, launch and sync edges between two
// events as flows (HTA's DEFAULT_EDGE_TYPES_IN_VIZ), and one slice per edge on the path's own track.
#pragma once

#include "analysis/critical_path.h"
#include "trace/trace_overlay.h"

namespace scaleprof::analysis {

// `path`'s edges must have been kept (critical_path's `events`).
trace::OverlaySpec critical_path_overlay_spec(const RankCriticalPath& path);

}  // namespace scaleprof::analysis
