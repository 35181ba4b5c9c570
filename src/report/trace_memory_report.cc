// `scaleprof trace memory` (issue 23): allocated and reserved bytes of every rank and device from the
// trace's [memory] events (analysis/memory_timeline.h): peaks, what was allocated before profiling,
// the peak of each ProfilerStep, what held the bytes at the peak, the spread of the peak across
// ranks, and the thinned step function for plots. Bytes are exact integers; times are microseconds
// from the first memory event of the selected ranks (steps: from the step's start).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "analysis/memory_timeline.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

// The first memory event of the selected ranks: times are shown from it.
int64_t memory_origin(const engine::RankStore& ranks) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  ranks->for_each([&](const engine::RankResults& r) {
    for (const auto& d : r.memory->devices) origin = std::min(origin, d.first_ts_ns);
  });
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

bool any_memory(const engine::RankStore& ranks) {
  bool any = false;
  ranks->for_each([&](const engine::RankResults& r) { any |= !r.memory->devices.empty(); });
  return any;
}

Cell bytes_or_null(int64_t bytes) {
  return bytes < 0 ? Cell::null() : Cell(bytes);
}

// Whether some byte figure of the selected ranks is unknown (a sum past int64: analysis/memory_timeline.h).
bool any_memory_unknown(const engine::RankStore& ranks) {
  bool any = false;
  ranks->for_each([&](const engine::RankResults& r) {
    for (const analysis::DeviceMemory& d : r.memory->devices) {
      for (int64_t v : {d.allocated_bytes, d.before_profiling, d.peak_allocated, d.min_allocated, d.final_allocated}) {
        any |= is_unknown_figure(v);
      }
      for (const analysis::MemoryHolder& h : d.holders) any |= is_unknown_figure(h.bytes);
    }
  });
  return any;
}

Table devices_table(const engine::RankStore& ranks, int64_t origin, bool any) {
  Table t;
  t.title = any ? "Memory per rank and device ([memory] events; bytes, times in us from the first memory event)"
                : "Memory per rank and device: the traces have no [memory] events (record with "
                  "torch.profiler.profile(profile_memory=True))";
  t.columns = {{"rank", "Rank"},
               {"device", "Device"},
               {"events", "Events"},
               {"allocations", "Allocs"},
               {"frees", "Frees"},
               {"before_profiling_bytes", "Before profiling (B)"},
               {"peak_allocated_bytes", "Peak allocated (B)"},
               {"peak_allocated_us", "Peak at (us)"},
               {"peak_reserved_bytes", "Peak reserved (B)"},
               {"peak_reserved_us", "Reserved peak at (us)"},
               {"min_allocated_bytes", "Min allocated (B)"},
               {"final_allocated_bytes", "Final allocated (B)"},
               {"out_of_memory_events", "OOM events"}};
  t.set_importance(Importance::kKey, {"rank", "device"});
  t.set_importance(Importance::kUseful, {"events", "peak_reserved_us", "final_allocated_bytes"});
  t.set_importance(Importance::kDetail, {"allocations", "frees", "min_allocated_bytes", "out_of_memory_events"});
  if (any_memory_unknown(ranks)) t.title += kUnknownFigureNote;
  t.row_source = [ranks, origin](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const analysis::DeviceMemory& d : r.memory->devices) {
        visit({r.rank, analysis::memory_device_name(d.device_type, d.device_id), d.events, d.allocations, d.frees,
               bytes_or_null(d.before_profiling), figure_cell(d.peak_allocated),
               us_cell(d.peak_allocated_ts_ns - origin), bytes_or_null(d.peak_reserved),
               d.peak_reserved < 0 ? Cell::null() : us_cell(d.peak_reserved_ts_ns - origin),
               figure_cell(d.min_allocated), figure_cell(d.final_allocated), r.memory->out_of_memory_events});
      }
    });
  };
  return t;
}

// Across ranks, per device type (each rank's largest peak on a device of that type).
Table spread_table(const engine::RankStore& ranks) {
  struct Acc {
    int64_t ranks = 0;
    int64_t max = std::numeric_limits<int64_t>::min(), max_rank = -1;
    int64_t min = std::numeric_limits<int64_t>::max(), min_rank = -1;
    double sum = 0;
    bool unknown = false;  // some rank's peak is unknown (a sum past int64): no spread
  };
  std::map<int32_t, Acc> by_type;
  ranks->for_each([&](const engine::RankResults& r) {
    std::map<int32_t, int64_t> peak;
    for (const analysis::DeviceMemory& d : r.memory->devices) {
      auto [it, added] = peak.try_emplace(d.device_type, d.peak_allocated);
      if (!added) it->second = std::max(it->second, d.peak_allocated);
    }
    for (const auto& [type, bytes] : peak) {
      Acc& a = by_type[type];
      ++a.ranks;
      a.unknown |= is_unknown_figure(bytes);
      a.sum += static_cast<double>(bytes);
      // The first rank sets both ends, whatever its value (a peak of INT64_MAX left the rank -1).
      if (a.ranks == 1 || bytes > a.max) {
        a.max = bytes;
        a.max_rank = r.rank;
      }
      if (a.ranks == 1 || bytes < a.min) {
        a.min = bytes;
        a.min_rank = r.rank;
      }
    }
  });
  Table t;
  t.title = "Peak allocated across ranks (imbalance = max / mean; 1 = balanced)";
  t.columns = {{"device_type", "Device type"},       {"ranks", "Ranks"},
               {"max_peak_bytes", "Max peak (B)"},   {"max_rank", "Max rank"},
               {"min_peak_bytes", "Min peak (B)"},   {"min_rank", "Min rank"},
               {"mean_peak_bytes", "Mean peak (B)"}, {"imbalance", "Imbalance"}};
  t.set_importance(Importance::kKey, {"device_type"});
  for (const auto& [type, a] : by_type) {
    std::string name = analysis::memory_device_name(type, 0);
    if (type != 0) name = name.substr(0, name.rfind(' '));  // the type alone
    const double mean = a.sum / static_cast<double>(a.ranks);
    if (a.unknown) {
      t.add_row({name, a.ranks, Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null()});
      continue;
    }
    t.add_row({name, a.ranks, a.max, a.max_rank, a.min, a.min_rank, Cell(mean, 0),
               mean > 0 ? Cell(static_cast<double>(a.max) / mean, 3) : Cell::null()});
  }
  return t;
}

Table steps_table(const engine::RankStore& ranks) {
  Table t;
  t.title = "Memory per ProfilerStep (peak of allocated inside the step; its time from the step's start, us)";
  t.columns = {{"rank", "Rank"},
               {"device", "Device"},
               {"step", "Step"},
               {"events", "Events"},
               {"start_allocated_bytes", "At start (B)"},
               {"peak_allocated_bytes", "Peak (B)"},
               {"peak_offset_us", "Peak at (us)"},
               {"peak_reserved_bytes", "Peak reserved (B)"},
               {"end_allocated_bytes", "At end (B)"},
               {"change_bytes", "Change (B)"}};
  t.set_importance(Importance::kKey, {"rank", "device", "step"});
  t.set_importance(Importance::kUseful, {"events", "peak_reserved_bytes"});
  t.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const analysis::DeviceMemory& d : r.memory->devices) {
        const std::string device = analysis::memory_device_name(d.device_type, d.device_id);
        for (const analysis::MemoryStepPeak& s : d.steps) {
          visit({r.rank, device, s.step, s.events, figure_cell(s.start_allocated), figure_cell(s.peak_allocated),
                 us_cell(s.peak_ts_ns - s.start_ns), bytes_or_null(s.peak_reserved), figure_cell(s.end_allocated),
                 figure_cell(difference_or_unknown(s.end_allocated, s.start_allocated))});
        }
      }
    });
  };
  return t;
}

Table holders_table(const engine::RankStore& ranks) {
  Table t;
  t.title =
      "Allocated at the peak, by the CPU operator that allocated it (torch memory categories: not in Kineto "
      "traces)";
  t.columns = {{"rank", "Rank"},           {"device", "Device"},           {"bytes", "Bytes"},
               {"share_pct", "% of peak"}, {"allocations", "Live blocks"}, {"operator", "Operator"}};
  t.set_importance(Importance::kKey, {"rank", "device"});
  t.set_importance(Importance::kUseful, {"allocations"});
  t.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const analysis::DeviceMemory& d : r.memory->devices) {
        const std::string device = analysis::memory_device_name(d.device_type, d.device_id);
        if (!d.holders_known) {
          visit({r.rank, device, figure_cell(d.peak_allocated), pct_cell(100.0), Cell::null(),
                 "(unknown: the events carry no Addr)"});
          continue;
        }
        for (const analysis::MemoryHolder& h : d.holders) {
          const double pct = d.peak_allocated > 0 && !is_unknown_figure(h.bytes)
                                 ? 100.0 * static_cast<double>(h.bytes) / static_cast<double>(d.peak_allocated)
                                 : std::numeric_limits<double>::quiet_NaN();
          visit({r.rank, device, figure_cell(h.bytes), pct_cell(pct), h.allocations, h.name});
        }
      }
    });
  };
  return t;
}

Table timeline_table(const engine::RankStore& ranks, int64_t origin) {
  Table t;
  t.title = "Allocated and reserved over time (the step function thinned for plots; exact peak kept)";
  t.columns = {{"rank", "Rank"},
               {"device", "Device"},
               {"time_us", "Time (us)"},
               {"allocated_bytes", "Allocated (B)"},
               {"reserved_bytes", "Reserved (B)"}};
  t.set_importance(Importance::kKey, {"rank", "device"});
  t.row_source = [ranks, origin](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const analysis::DeviceMemory& d : r.memory->devices) {
        const std::string device = analysis::memory_device_name(d.device_type, d.device_id);
        for (const analysis::MemoryPoint& p : d.timeline) {
          visit({r.rank, device, us_cell(p.ts_ns - origin), figure_cell(p.allocated), bytes_or_null(p.reserved)});
        }
      }
    });
  };
  return t;
}

}  // namespace

TraceReport memory_tables(const engine::RankStore& ranks, bool subcommand) {
  const int64_t origin = memory_origin(ranks);
  const bool any = any_memory(ranks);
  TraceReport report;
  // In summary only where some rank has memory events: the other traces' summaries stay as they were.
  if (!any && !subcommand) return report;
  report.add("memory_devices", devices_table(ranks, origin, any));
  report.add("memory_ranks", spread_table(ranks));
  report.add("memory_steps", steps_table(ranks));
  report.add("memory_at_peak", holders_table(ranks));
  // Summary has it too: the trace page draws it (trace_html.cc).
  report.add("memory_timeline", timeline_table(ranks, origin));
  return report;
}

}  // namespace scaleprof::report
