// `scaleprof trace idle`: HTA's idle-time breakdown for every stream of every selected rank: how
// much of the time between consecutive pieces of work was spent waiting for the host to launch
// (host_wait), in the short gaps between back-to-back kernels (kernel_wait, gaps under
// --consecutive-kernel-delay), or otherwise (other); the statistics of those gaps; and per stream
// how many events overlapped earlier work instead of following a gap.
#include "analysis/idle_time.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

TraceReport idle_tables(const engine::RankStore& ranks) {
  Table idle;
  idle.title = "Idle time per stream by cause";
  idle.columns = {{"rank", "Rank"},         {"device", "Device"},     {"stream", "Stream"},
                  {"category", "Category"}, {"idle_us", "Idle (us)"}, {"idle_pct", "Of stream idle (%)"},
                  {"gaps", "Gaps"}};
  idle.set_importance(Importance::kKey, {"rank", "device", "stream", "category"});
  idle.set_importance(Importance::kUseful, {"gaps"});
  idle.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const analysis::StreamIdle& s : r.idle.value()) {
        for (int c = 0; c < analysis::kIdleCategoryCount; ++c) {
          const auto category = static_cast<analysis::IdleCategory>(c);
          visit({r.rank, s.device, s.stream, analysis::idle_category_name(category), us_cell(s.idle_ns[c]),
                 pct_cell(100.0 * s.ratio(category)), s.gaps[c].count});
        }
      }
    });
  };
  Table gaps;
  gaps.title = "Idle gaps per stream and cause (us)";
  gaps.columns = {{"rank", "Rank"},   {"device", "Device"}, {"stream", "Stream"}, {"category", "Category"},
                  {"count", "Count"}, {"mean_us", "Mean"},  {"std_us", "Std"},    {"min_us", "Min"},
                  {"p25_us", "P25"},  {"p50_us", "P50"},    {"p75_us", "P75"},    {"max_us", "Max"}};
  gaps.set_importance(Importance::kKey, {"rank", "device", "stream", "category"});
  gaps.set_importance(Importance::kUseful, {"min_us", "max_us"});
  gaps.set_importance(Importance::kDetail, {"std_us", "p25_us", "p75_us"});
  gaps.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const analysis::StreamIdle& s : r.idle.value()) {
        for (int c = 0; c < analysis::kIdleCategoryCount; ++c) {
          const auto category = static_cast<analysis::IdleCategory>(c);
          const analysis::Distribution& d = s.gaps[c];
          visit({r.rank, s.device, s.stream, analysis::idle_category_name(category), d.count, us_stat_cell(d.mean),
                 us_stat_cell(d.std), us_stat_cell(d.min), us_stat_cell(d.p25), us_stat_cell(d.p50),
                 us_stat_cell(d.p75), us_stat_cell(d.max)});
        }
      }
    });
  };
  Table streams;
  streams.title = "Work per stream (overlaps: events that started before earlier work ended; not gaps)";
  streams.columns = {{"rank", "Rank"},     {"device", "Device"}, {"stream", "Stream"},
                     {"events", "Events"}, {"gaps", "Gaps"},     {"overlaps", "Overlaps"}};
  streams.set_importance(Importance::kKey, {"rank", "device", "stream"});
  streams.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& r) {
      for (const analysis::StreamIdle& s : r.idle.value()) {
        int64_t gap_count = 0;
        for (const analysis::Distribution& d : s.gaps) gap_count += d.count;
        visit({r.rank, s.device, s.stream, s.events, gap_count, s.overlaps});
      }
    });
  };
  TraceReport report;
  report.add("idle", std::move(idle));
  report.add("idle_gaps", std::move(gaps));
  report.add("idle_streams", std::move(streams));
  return report;
}

}  // namespace scaleprof::report
