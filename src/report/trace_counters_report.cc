// `scaleprof trace counters` (issue 23 item 3): the launch queue of every stream and the memcpy
// bandwidth of every direction per rank (analysis/counters.h). Each table gives the statistics
// weighted by time first and HTA's per-point statistics after them, under HTA's column names, so the
// two can be put side by side; the full-queue table has a row for every stream of every rank (HTA's
// keeps one stream per rank, the last it looked at).
#include <cmath>

#include "analysis/counters.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

// A statistic that is a count or GB/s; null when undefined (no point, no time weighed).
Cell stat_cell(double v, int digits) {
  return std::isfinite(v) ? Cell(v, digits) : Cell::null();
}

// `ends`: the digits of min and max (a queue length is whole; a quartile between two need not be).
void add_point_stats(std::vector<Cell>* row, const analysis::PointStats& s, int digits, int ends) {
  row->insert(row->end(),
              {s.count, stat_cell(s.mean, 6), stat_cell(s.std, 6), stat_cell(s.min, ends), stat_cell(s.p25, digits),
               stat_cell(s.p50, digits), stat_cell(s.p75, digits), stat_cell(s.max, ends)});
}

std::vector<Column> point_columns(const std::string& prefix) {
  return {{prefix + "_count", "Points"},  {prefix + "_mean", "Point mean"}, {prefix + "_std", "Point std"},
          {prefix + "_min", "Point min"}, {prefix + "_25%", "Point P25"},   {prefix + "_50%", "Point P50"},
          {prefix + "_75%", "Point P75"}, {prefix + "_max", "Point max"}};
}

void mark_point_columns(Table* t, const std::string& prefix) {
  t->set_importance(Importance::kUseful, {prefix + "_mean"});
  t->set_importance(Importance::kDetail, {prefix + "_count", prefix + "_std", prefix + "_min", prefix + "_25%",
                                          prefix + "_50%", prefix + "_75%", prefix + "_max"});
}

double percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : std::nan("");
}

}  // namespace

TraceReport counters_tables(const engine::RankStore& ranks) {
  Table queue;
  queue.title = "Launch queue per stream: weighted by time, then per change point as HTA";
  queue.columns = {{"rank", "Rank"},         {"stream", "Stream"}, {"launches", "Launches"},
                   {"span_us", "Span (us)"}, {"mean", "Mean"},     {"p50", "P50"},
                   {"p95", "P95"},           {"max", "Max"},       {"empty_pct", "Empty %"}};
  for (Column& c : point_columns("queue_length")) queue.columns.push_back(std::move(c));
  queue.set_importance(Importance::kKey, {"rank", "stream"});
  queue.set_importance(Importance::kDetail, {"span_us", "launches"});
  mark_point_columns(&queue, "queue_length");
  queue.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& rank) {
      for (const analysis::StreamQueue& q : rank.counters->queues) {
        std::vector<Cell> row = {rank.rank,
                                 q.stream,
                                 q.launches,
                                 us_cell(q.weighted.time_ns),
                                 stat_cell(q.weighted.mean, 3),
                                 stat_cell(q.weighted.p50, 0),
                                 stat_cell(q.weighted.p95, 0),
                                 stat_cell(q.weighted.max, 0),
                                 pct_cell(percent(q.empty_ns, q.weighted.time_ns))};
        add_point_stats(&row, q.points, 2, 0);
        visit(row);
      }
    });
  };

  Table full;
  full.title = "Time with the launch queue full (queue length at or above the limit)";
  full.columns = {{"rank", "Rank"},
                  {"stream", "Stream"},
                  {"max_queue_length", "Limit"},
                  {"limit_from", "Limit from"},
                  {"duration_at_max_queue_length_us", "Full (us)"},
                  {"relative_duration_at_max_queue_length", "Share of trace"},
                  {"full_launches", "Launches when full"},
                  {"full_launch_call_us", "Their calls (us)"}};
  full.set_importance(Importance::kKey, {"rank", "stream"});
  full.set_importance(Importance::kDetail, {"max_queue_length", "limit_from"});
  full.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& rank) {
      const analysis::RankCounters& c = *rank.counters;
      for (const analysis::StreamQueue& q : c.queues) {
        const double share = c.trace_duration_ns > 0
                                 ? static_cast<double>(q.full_ns) / static_cast<double>(c.trace_duration_ns)
                                 : std::nan("");
        visit({rank.rank, q.stream, c.max_queue_length, analysis::queue_limit_source_name(c.limit_source),
               us_cell(q.full_ns), stat_cell(share, 6), q.full_launches, us_cell(q.full_launch_call_ns)});
      }
    });
  };

  Table bandwidth;
  bandwidth.title = "Memcpy/memset bandwidth per direction (GB/s): weighted by time, then per change point as HTA";
  bandwidth.columns = {{"rank", "Rank"},    {"name", "Direction"},    {"copies", "Copies"},
                       {"bytes", "Bytes"},  {"busy_us", "Busy (us)"}, {"mean_gbps", "Mean"},
                       {"p50_gbps", "P50"}, {"p95_gbps", "P95"},      {"max_gbps", "Max"}};
  for (Column& c : point_columns("memory_bw_gbps")) bandwidth.columns.push_back(std::move(c));
  bandwidth.set_importance(Importance::kKey, {"rank", "name"});
  bandwidth.set_importance(Importance::kDetail, {"busy_us"});
  mark_point_columns(&bandwidth, "memory_bw_gbps");
  bool unknown_bytes = false;
  ranks->for_each([&](const engine::RankResults& rank) {
    for (const analysis::DirectionBandwidth& b : rank.counters->bandwidth) unknown_bytes |= is_unknown_figure(b.bytes);
  });
  if (unknown_bytes) bandwidth.title += kUnknownFigureNote;
  bandwidth.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& rank) {
      for (const analysis::DirectionBandwidth& b : rank.counters->bandwidth) {
        std::vector<Cell> row = {rank.rank,
                                 b.name,
                                 b.copies,
                                 figure_cell(b.bytes),
                                 us_cell(b.weighted.time_ns),
                                 stat_cell(b.weighted.mean, 3),
                                 stat_cell(b.weighted.p50, 3),
                                 stat_cell(b.weighted.p95, 3),
                                 stat_cell(b.weighted.max, 3)};
        add_point_stats(&row, b.points, 6, 6);
        visit(row);
      }
    });
  };
  TraceReport report;
  report.add("queue_length", std::move(queue));
  report.add("queue_full", std::move(full));
  report.add("memory_bandwidth", std::move(bandwidth));
  return report;
}

TraceReport counter_series_tables(const engine::RankStore& ranks) {
  Table queue;
  queue.title = "Launch queue length per stream over time (one row per change)";
  queue.columns = {{"rank", "Rank"}, {"ts", "Time (us)"},  {"pid", "Pid"},
                   {"tid", "Tid"},   {"stream", "Stream"}, {"queue_length", "Queue length"}};
  queue.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& rank) {
      for (const analysis::CounterSeries& s : rank.counter_series->queues) {
        for (const analysis::CounterPoint& p : s.points) {
          visit({rank.rank, us_cell(p.ts), s.pid, s.tid, s.key, static_cast<int64_t>(p.value)});
        }
      }
    });
  };
  Table bandwidth;
  bandwidth.title = "Memcpy/memset bandwidth per direction over time (one row per change, GB/s)";
  bandwidth.columns = {
      {"rank", "Rank"}, {"ts", "Time (us)"}, {"pid", "Pid"}, {"name", "Direction"}, {"memory_bw_gbps", "GB/s"}};
  bandwidth.row_source = [ranks](const RowVisitor& visit) {
    ranks->for_each([&](const engine::RankResults& rank) {
      const analysis::RankCounterSeries& c = *rank.counter_series;
      for (size_t k = 0; k < c.bandwidth.size(); ++k) {
        for (const analysis::CounterPoint& p : c.bandwidth[k].points) {
          visit({rank.rank, us_cell(p.ts), c.bandwidth[k].pid, c.names[k], Cell(p.value, 6)});
        }
      }
    });
  };
  TraceReport report;
  report.add("queue_length_series", std::move(queue));
  report.add("memory_bandwidth_series", std::move(bandwidth));
  return report;
}

}  // namespace scaleprof::report
