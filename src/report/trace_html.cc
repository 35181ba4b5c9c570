#include "report/trace_html.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "report/html_page.h"
#include "report/svg_charts.h"

namespace scaleprof::report {

namespace {

// Per-rank charts show at most this many bars; more ranks are binned.
constexpr size_t kMaxRankBars = 64;
// How many of the worst ranks a binned chart names.
constexpr size_t kWorstNamed = 5;
// Rows of the operator table on the page (all of them are in CSV and JSON).
constexpr size_t kMaxOperatorRows = 1000;

const Table* find_table(const TraceReport& report, std::string_view key) {
  for (size_t i = 0; i < report.keys.size(); ++i) {
    if (report.keys[i] == key) return &report.tables[i];
  }
  return nullptr;
}

// A table's columns by key, and its rows: the page reads the tables summary prints.
class Rows {
 public:
  explicit Rows(const Table* table) : table_(table) {}
  bool present() const { return table_ != nullptr; }
  int column(std::string_view key) const {
    if (table_ == nullptr) return -1;
    for (size_t i = 0; i < table_->columns.size(); ++i) {
      if (table_->columns[i].key == key) return static_cast<int>(i);
    }
    return -1;
  }
  void each(const RowVisitor& visit) const {
    if (table_ != nullptr) table_->for_each_row(visit);
  }

 private:
  const Table* table_;
};

double number(const std::vector<Cell>& row, int column) {
  if (column < 0 || static_cast<size_t>(column) >= row.size()) return std::nan("");
  const auto& v = row[static_cast<size_t>(column)].value;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::nan("");
}

std::string text(const std::vector<Cell>& row, int column) {
  if (column < 0 || static_cast<size_t>(column) >= row.size()) return {};
  const auto& v = row[static_cast<size_t>(column)].value;
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return {};
}

// Values per rank, each a named part (for stacked bars), in rank order.
using PerRank = std::map<int64_t, std::vector<ChartSegment>>;

// The parts of the row's rank, or nullptr for a row without one (the all-ranks total some tables end
// with).
std::vector<ChartSegment>* rank_parts(PerRank* ranks, const std::vector<Cell>& row, int rank_column) {
  const double rank = number(row, rank_column);
  return std::isfinite(rank) ? &(*ranks)[static_cast<int64_t>(rank)] : nullptr;
}

// Leaves out ranks without a value (a rank without device work has no breakdown); true when any is left.
bool keep_ranks_with_values(PerRank* ranks) {
  std::erase_if(*ranks, [](const auto& entry) { return entry.second.empty(); });
  return !ranks->empty();
}

void add_part(std::vector<ChartSegment>* parts, const std::string& name, double value) {
  if (!std::isfinite(value)) return;
  for (ChartSegment& s : *parts) {
    if (s.name == name) {
      s.value += value;
      return;
    }
  }
  parts->push_back({name, value});
}

double total(const std::vector<ChartSegment>& parts, const std::string& only = {}) {
  double sum = 0;
  for (const ChartSegment& s : parts) {
    if (only.empty() || s.name == only) sum += s.value;
  }
  return sum;
}

// One bar per rank, or, past kMaxRankBars ranks, one per bin of consecutive ranks with the mean of
// each part; `worst` (the rank's figure that matters most, larger is worse) names the worst ranks.
struct RankChart {
  std::vector<ChartBar> bars;
  std::string note;  // how the ranks were binned and which were worst; empty when not binned
};
RankChart rank_bars(const PerRank& ranks, const std::function<double(const std::vector<ChartSegment>&)>& worst,
                    const std::string& worst_what) {
  RankChart out;
  if (ranks.size() <= kMaxRankBars) {
    for (const auto& [rank, parts] : ranks) out.bars.push_back({fmt::format("rank {}", rank), parts});
    return out;
  }
  const size_t per_bin = (ranks.size() + kMaxRankBars - 1) / kMaxRankBars;
  auto it = ranks.begin();
  while (it != ranks.end()) {
    const int64_t first = it->first;
    int64_t last = first;
    std::vector<ChartSegment> sum;
    size_t n = 0;
    for (; it != ranks.end() && n < per_bin; ++it, ++n) {
      last = it->first;
      for (const ChartSegment& s : it->second) add_part(&sum, s.name, s.value);
    }
    for (ChartSegment& s : sum) s.value /= static_cast<double>(n);
    out.bars.push_back({fmt::format("ranks {}-{}", first, last), std::move(sum)});
  }
  std::vector<std::pair<double, int64_t>> order;
  for (const auto& [rank, parts] : ranks) {
    const double w = worst(parts);
    if (std::isfinite(w)) order.emplace_back(w, rank);
  }
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  std::string named;
  for (size_t i = 0; i < std::min(kWorstNamed, order.size()); ++i) {
    named += fmt::format("{}rank {} ({:.4g})", i == 0 ? "" : ", ", order[i].second, order[i].first);
  }
  out.note = fmt::format("{} ranks in {} bins of {} consecutive ranks, each bar the mean of its bin. {}: {}.",
                         ranks.size(), out.bars.size(), per_bin, worst_what, named.empty() ? "none" : named);
  return out;
}

std::string figure(const std::string& id, const std::string& svg, const std::string& caption, const std::string& note) {
  std::string out =
      fmt::format("<figure id=\"figure-{}\">\n{}<figcaption>{}", html_escape(id), svg, html_escape(caption));
  if (!note.empty()) out += "<br>" + html_escape(note);
  return out + "</figcaption>\n</figure>\n";
}

std::string missing(const std::string& what) {
  return "<p class=\"meta\">" + html_escape(what) + "</p>\n";
}

std::string breakdown_section(const TraceReport& report) {
  const Rows rows(find_table(report, "breakdown"));
  if (!rows.present()) return missing("No temporal breakdown (left out with --only).");
  const int rank = rows.column("rank"), compute = rows.column("compute_pct"), other = rows.column("non_compute_pct"),
            idle = rows.column("idle_pct");
  PerRank ranks;
  rows.each([&](const std::vector<Cell>& row) {
    if (auto* parts = rank_parts(&ranks, row, rank)) {
      add_part(parts, "computation", number(row, compute));
      add_part(parts, "non-computation", number(row, other));
      add_part(parts, "idle", number(row, idle));
    }
  });
  if (!keep_ranks_with_values(&ranks)) return missing("No device activity in the traces: no temporal breakdown.");
  RankChart chart = rank_bars(
      ranks, [](const auto& p) { return total(p, "idle"); }, "Most idle");
  BarChart bars{"chart-breakdown", "Temporal breakdown per rank", "% of the device's profiled time", 100,
                std::move(chart.bars)};
  return figure("breakdown", bar_chart_svg(bars),
                "Temporal breakdown per rank: device time in computation kernels, in other kernels "
                "(communication, memory), and idle (HTA's get_temporal_breakdown).",
                chart.note);
}

std::string kernel_types_section(const TraceReport& report) {
  const Rows rows(find_table(report, "kernel_types"));
  if (!rows.present()) return missing("No kernel types (left out with --only).");
  const int type = rows.column("kernel_type"), pct = rows.column("pct");
  BarChart chart{"chart-kernel-types", "Kernel time by type, all ranks", "% of kernel time", 100, {}};
  rows.each([&](const std::vector<Cell>& row) {
    chart.bars.push_back({text(row, type), {{text(row, type), number(row, pct)}}});
  });
  if (chart.bars.empty()) return missing("No device kernels in the traces.");
  return figure("kernel-types", bar_chart_svg(chart),
                "Kernel time by type over all ranks: communication, computation, memory.", "");
}

std::string idle_section(const TraceReport& report) {
  const Rows rows(find_table(report, "idle"));
  if (!rows.present()) return missing("No idle time breakdown (left out with --only).");
  const int rank = rows.column("rank"), category = rows.column("category"), idle = rows.column("idle_us");
  PerRank ranks;
  rows.each([&](const std::vector<Cell>& row) {
    if (auto* parts = rank_parts(&ranks, row, rank)) add_part(parts, text(row, category), number(row, idle) / 1000);
  });
  if (!keep_ranks_with_values(&ranks)) return missing("No device idle time in the traces.");
  RankChart chart = rank_bars(
      ranks, [](const auto& p) { return total(p); }, "Most idle (ms)");
  BarChart bars{"chart-idle", "Device idle time per rank, by cause", "ms idle, all streams", 0, std::move(chart.bars)};
  return figure("idle", bar_chart_svg(bars),
                "Idle time by cause per rank, summed over streams: waiting for the host, for the previous kernel "
                "(gaps shorter than --consecutive-kernel-delay), or other (HTA's get_idle_time_breakdown).",
                chart.note);
}

std::string overlap_section(const TraceReport& report) {
  const Rows rows(find_table(report, "overlap"));
  if (!rows.present()) return missing("No communication/computation overlap (left out with --only).");
  const int rank = rows.column("rank"), pct = rows.column("comm_comp_overlap_pct");
  PerRank ranks;
  rows.each([&](const std::vector<Cell>& row) {
    if (auto* parts = rank_parts(&ranks, row, rank)) add_part(parts, "overlap", number(row, pct));
  });
  if (!keep_ranks_with_values(&ranks)) return missing("No communication kernels: no overlap to show.");
  // Least overlap is worst: rank by the share not overlapped.
  RankChart chart = rank_bars(
      ranks, [](const auto& p) { return 100 - total(p); }, "Least overlapped (100 - %)");
  BarChart bars{"chart-overlap", "Communication overlapped by computation per rank",
                "% of communication time during computation", 100, std::move(chart.bars)};
  return figure("overlap", bar_chart_svg(bars),
                "Share of each rank's communication time overlapped by computation (HTA's get_comm_comp_overlap).",
                chart.note);
}

// Memory (issue 23): allocated and reserved over time, one series each per rank and device, from the
// thinned timeline of `trace memory` (at most 3 points per bucket); ranks past what kMaxChartPoints
// holds are left out and named in the caption. Absent (no section) when no trace has [memory] events.
std::string memory_section(const TraceReport& report) {
  const Rows rows(find_table(report, "memory_timeline"));
  if (!rows.present()) return {};
  const int rank = rows.column("rank"), device = rows.column("device"), time = rows.column("time_us"),
            allocated = rows.column("allocated_bytes"), reserved = rows.column("reserved_bytes");
  ScatterChart chart{"chart-memory",
                     "Allocated and reserved memory over time",
                     "ms from the first memory event",
                     "GB",
                     false,
                     false,
                     {}};
  std::set<int64_t> drawn, left_out;
  rows.each([&](const std::vector<Cell>& row) {
    const auto r = static_cast<int64_t>(number(row, rank));
    if (!drawn.contains(r) && (left_out.contains(r) || chart.points.size() + 2 * 512 > kMaxChartPoints)) {
      left_out.insert(r);
      return;
    }
    drawn.insert(r);
    const std::string series = fmt::format("rank {} {}", r, text(row, device));
    const double t = number(row, time) / 1000;
    chart.points.push_back({t, number(row, allocated) / 1e9, series + " allocated"});
    const double res = number(row, reserved);
    if (std::isfinite(res) && res > 0) chart.points.push_back({t, res / 1e9, series + " reserved"});
  });
  if (chart.points.empty()) return {};
  std::string note;
  if (!left_out.empty()) {
    note = fmt::format("{} more ranks not drawn (from rank {}): `scaleprof trace memory --ranks` draws them.",
                       left_out.size(), *left_out.begin());
  }
  std::string out = "<section id=\"memory\"><h2>Memory</h2>\n";
  out += figure("memory", scatter_chart_svg(chart),
                "Bytes allocated and reserved by each rank's allocators after each [memory] event "
                "(profile_memory=True), thinned to the lowest and highest points of each time bucket; the exact "
                "peak is always drawn.",
                note);
  if (const Table* t = find_table(report, "memory_devices")) out += html_table(*t, "memory-devices", {1024, true});
  if (const Table* t = find_table(report, "memory_at_peak")) out += html_table(*t, "memory-at-peak", {1024, true});
  return out + "</section>\n";
}

// Issue 23, counters: per rank, the time-weighted mean launch queue of its busiest stream (a rank
// whose queues stay empty is bound by its host), and the time each stream's queue was full.
std::string counters_section(const TraceReport& report) {
  const Rows rows(find_table(report, "queue_length"));
  if (!rows.present()) return missing("No counters (left out with --only).");
  const int rank = rows.column("rank"), mean = rows.column("mean");
  PerRank ranks;
  rows.each([&](const std::vector<Cell>& row) {
    auto* parts = rank_parts(&ranks, row, rank);
    const double v = number(row, mean);
    if (parts == nullptr || !std::isfinite(v)) return;
    if (parts->empty()) parts->push_back({"busiest stream", v});
    (*parts)[0].value = std::max((*parts)[0].value, v);
  });
  if (!keep_ranks_with_values(&ranks)) return missing("No kernel launches with device work: no launch queue.");
  RankChart chart = rank_bars(
      ranks, [](const auto& p) { return total(p); }, "Longest queue");
  BarChart bars{"chart-queue", "Launch queue length per rank", "launches queued, mean over time (busiest stream)", 0,
                std::move(chart.bars)};
  std::string out = figure("queue", bar_chart_svg(bars),
                           "Launches enqueued and not yet started on each rank's busiest stream, weighted by time "
                           "(scaleprof trace counters; HTA's get_queue_length_summary gives the mean over change "
                           "points). Near 0: the device waits for the host to launch.",
                           chart.note);
  if (const Table* t = find_table(report, "queue_full")) out += html_table(*t, "queue-full", {200, true});
  return out;
}

std::string top_kernels_section(const TraceReport& report) {
  const Rows rows(find_table(report, "kernels"));
  if (!rows.present()) return missing("No kernel table (left out with --only).");
  const int name = rows.column("name"), type = rows.column("kernel_type"), sum = rows.column("sum_us");
  std::map<std::string, std::pair<std::string, double>> by_name;  // name -> (type, ms)
  rows.each([&](const std::vector<Cell>& row) {
    const double ms = number(row, sum) / 1000;
    if (!std::isfinite(ms)) return;
    auto& entry = by_name[text(row, name)];
    entry.first = text(row, type);
    entry.second += ms;
  });
  if (by_name.empty()) return missing("No device kernels in the traces.");
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [n, entry] : by_name) order.emplace_back(entry.second, n);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  BarChart chart{"chart-top-kernels", "Top kernels by total time, all ranks", "ms, all ranks", 0, {}};
  for (size_t i = 0; i < std::min<size_t>(15, order.size()); ++i) {
    chart.bars.push_back({order[i].second, {{by_name[order[i].second].first, order[i].first}}});
  }
  return figure("top-kernels", bar_chart_svg(chart),
                "The kernels with the most time over all ranks (each rank's top kernels per type, as in the kernel "
                "table; --top sets how many), coloured by type.",
                "");
}

std::string collectives_section(const TraceReport& report) {
  const Rows calls(find_table(report, "collectives"));
  if (!calls.present()) return missing("No collectives (left out with --only).");
  const int group = calls.column("group"), position = calls.column("position"), step = calls.column("step"),
            type = calls.column("type"), bytes = calls.column("bytes"), busbw = calls.column("busbw_gbps");
  std::vector<ChartPoint> points;
  size_t seen = 0;
  std::map<std::pair<std::string, int64_t>, std::string> step_of;  // (group, position) -> step
  std::set<std::string> steps;
  calls.each([&](const std::vector<Cell>& row) {
    ++seen;
    points.push_back({number(row, bytes), number(row, busbw), text(row, type)});
    std::string s = text(row, step);
    if (s.empty() || s == "-1") s = "no step";
    steps.insert(s);
    step_of[{text(row, group), static_cast<int64_t>(number(row, position))}] = s;
  });
  if (seen == 0) return missing("No collectives matched across ranks.");
  std::erase_if(points,
                [](const ChartPoint& p) { return !(p.x > 0 && p.y > 0 && std::isfinite(p.x) && std::isfinite(p.y)); });
  std::string note;
  if (points.size() > kMaxChartPoints) {
    // Every k-th call, so the picture keeps the whole run's spread.
    const size_t k = (points.size() + kMaxChartPoints - 1) / kMaxChartPoints;
    std::vector<ChartPoint> kept;
    for (size_t i = 0; i < points.size(); i += k) kept.push_back(std::move(points[i]));
    note = fmt::format("{} calls with a bandwidth; one in every {} is drawn.", points.size(), k);
    points = std::move(kept);
  }
  std::string out;
  if (points.empty()) {
    out =
        missing(fmt::format("{} collective call(s), none with a bandwidth (calls matched across every rank of "
                            "their group, with a message size): no bandwidth chart.",
                            seen));
  } else {
    ScatterChart scatter{"chart-collective-bandwidth",
                         "Collective bus bandwidth against message size",
                         "message size (bytes)",
                         "bus bandwidth (GB/s)",
                         true,
                         true,
                         std::move(points)};
    out = figure("collective-bandwidth", scatter_chart_svg(scatter),
                 "Bus bandwidth of each collective call matched across ranks against its message size "
                 "(nccl-tests' busBw rule), by type.",
                 note);
  }
  // The heatmap: how late each rank arrived at the collectives of each step. Every rank of a call
  // waits until the last arrives, so a rank's lateness behind the first is the call's largest wait
  // minus its own: the straggler is the dark row (the ranks that wait for it are light).
  const Rows per_rank(find_table(report, "collective_ranks"));
  const int r_group = per_rank.column("group"), r_position = per_rank.column("position"),
            r_rank = per_rank.column("rank"), r_wait = per_rank.column("wait_us");
  std::map<std::pair<std::string, int64_t>, double> largest_wait;
  per_rank.each([&](const std::vector<Cell>& row) {
    const double w = number(row, r_wait);
    if (!std::isfinite(w)) return;
    double& most = largest_wait[{text(row, r_group), static_cast<int64_t>(number(row, r_position))}];
    most = std::max(most, w);
  });
  std::map<int64_t, std::map<std::string, double>> wait;  // rank -> step -> ms late
  per_rank.each([&](const std::vector<Cell>& row) {
    const std::pair<std::string, int64_t> call{text(row, r_group), static_cast<int64_t>(number(row, r_position))};
    const auto it = step_of.find(call);
    const double w = number(row, r_wait);
    if (it == step_of.end() || !std::isfinite(w) || !std::isfinite(number(row, r_rank))) return;
    wait[static_cast<int64_t>(number(row, r_rank))][it->second] += (largest_wait[call] - w) / 1000;
  });
  if (wait.empty()) return out;
  // Steps in order (numbers by value), binned to at most kMaxHeatmapColumns columns.
  std::vector<std::string> step_list(steps.begin(), steps.end());
  std::stable_sort(step_list.begin(), step_list.end(), [](const std::string& a, const std::string& b) {
    const bool na = !a.empty() && std::isdigit(static_cast<unsigned char>(a[0])) != 0;
    const bool nb = !b.empty() && std::isdigit(static_cast<unsigned char>(b[0])) != 0;
    if (na != nb) return na;
    return na && a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  const size_t steps_per_column = (step_list.size() + kMaxHeatmapColumns - 1) / kMaxHeatmapColumns;
  const size_t ranks_per_row = (wait.size() + kMaxHeatmapRows - 1) / kMaxHeatmapRows;
  Heatmap map{"chart-collective-lateness", "Lateness at collectives per rank and step", "ms late", {}, {}, {}};
  std::map<std::string, size_t> column_of;
  for (size_t i = 0; i < step_list.size(); ++i) {
    const size_t c = i / steps_per_column;
    column_of[step_list[i]] = c;
    if (c == map.column_labels.size()) {
      const size_t last = std::min(step_list.size(), (c + 1) * steps_per_column) - 1;
      map.column_labels.push_back(last == i ? "step " + step_list[i] : "steps " + step_list[i] + "-" + step_list[last]);
    }
  }
  size_t n = 0;
  int64_t first_of_row = 0;
  for (const auto& [rank, steps_waited] : wait) {
    if (n % ranks_per_row == 0) {
      first_of_row = rank;
      map.row_labels.emplace_back();
      map.values.insert(map.values.end(), map.column_labels.size(), std::nan(""));
    }
    ++n;
    map.row_labels.back() =
        first_of_row == rank ? fmt::format("rank {}", rank) : fmt::format("ranks {}-{}", first_of_row, rank);
    double* row = map.values.data() + (map.row_labels.size() - 1) * map.column_labels.size();
    for (const auto& [s, ms] : steps_waited) {
      double& cell = row[column_of[s]];
      // A bin shows its latest rank: one straggler must not vanish in a mean.
      cell = std::isnan(cell) ? ms : std::max(cell, ms);
    }
  }
  const std::string heat_note =
      ranks_per_row > 1 || steps_per_column > 1
          ? fmt::format("{} ranks x {} steps; each cell the latest of {} rank(s) x {} step(s).", wait.size(),
                        step_list.size(), ranks_per_row, steps_per_column)
          : "";
  return out + figure("collective-lateness", heatmap_svg(map),
                      "Straggler heatmap: how late each rank arrived at the collectives of each step, behind the "
                      "first rank to arrive (summed over the step's calls; darker: later). Every rank waits for "
                      "the last one, so a dark row is the rank the others wait for.",
                      heat_note);
}

std::string key_figures(const TraceReport& report) {
  std::vector<std::string> items;
  size_t ranks = 0;
  Rows(find_table(report, "inputs")).each([&](const std::vector<Cell>&) { ++ranks; });
  items.push_back(fmt::format("<b>{}</b> trace file(s) read", ranks));
  const Rows breakdown(find_table(report, "breakdown"));
  const int b_rank = breakdown.column("rank"), b_idle = breakdown.column("idle_pct");
  double idle_sum = 0, idle_max = -1;
  int64_t idle_rank = -1;
  size_t idle_n = 0;
  breakdown.each([&](const std::vector<Cell>& row) {
    const double v = number(row, b_idle);
    if (!std::isfinite(v) || !std::isfinite(number(row, b_rank))) return;
    idle_sum += v;
    ++idle_n;
    if (v > idle_max) {
      idle_max = v;
      idle_rank = static_cast<int64_t>(number(row, b_rank));
    }
  });
  if (idle_n > 0) {
    items.push_back(fmt::format("device idle <b>{:.1f}%</b> on average; most on rank {} ({:.1f}%)",
                                idle_sum / static_cast<double>(idle_n), idle_rank, idle_max));
  }
  const Rows stragglers(find_table(report, "stragglers"));
  const int s_rank = stragglers.column("rank"), s_wait = stragglers.column("wait_imposed_us");
  double wait_max = 0;
  int64_t wait_rank = -1;
  stragglers.each([&](const std::vector<Cell>& row) {
    const double v = number(row, s_wait);
    if (std::isfinite(v) && v > wait_max && std::isfinite(number(row, s_rank))) {
      wait_max = v;
      wait_rank = static_cast<int64_t>(number(row, s_rank));
    }
  });
  if (wait_rank >= 0) {
    items.push_back(fmt::format("the others waited most for <b>rank {}</b>: {:.3f} ms at the collectives", wait_rank,
                                wait_max / 1000));
  }
  std::string out = "<section id=\"key-figures\"><h2>Key figures</h2><ul>\n";
  for (const std::string& i : items) out += "<li>" + i + "</li>\n";
  return out + "</ul></section>\n";
}

// The one script of the page: sorts a table with class "sortable" by the clicked column (numbers
// as numbers), ascending then descending.
constexpr const char* kSortScript = R"(<script>
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th, col){
    th.addEventListener('click', function(){
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var up = th.getAttribute('data-up') !== '1';
      th.setAttribute('data-up', up ? '1' : '0');
      rows.sort(function(a, b){
        var x = a.cells[col] ? a.cells[col].textContent : '', y = b.cells[col] ? b.cells[col].textContent : '';
        var nx = parseFloat(x), ny = parseFloat(y);
        var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
        return up ? c : -c;
      });
      rows.forEach(function(r){ body.appendChild(r); });
    });
  });
});
</script>
)";

constexpr const char* kTraceStyle = "table.sortable th{cursor:pointer}table.sortable th:hover{background:#dde8f3}\n";

}  // namespace

std::string render_trace_html(const TraceReport& report, const TraceHtmlOptions& options) {
  std::string out = html_page_start("scaleprof trace summary", kTraceStyle);
  out += "<h1>Trace summary</h1>\n<p class=\"meta\">scaleprof " SCALEPROF_VERSION " &middot; ";
  for (size_t i = 0; i < options.inputs.size() && i < 8; ++i) {
    out += (i == 0 ? "" : ", ") + ("<code>" + html_escape(options.inputs[i]) + "</code>");
  }
  if (options.inputs.size() > 8) out += fmt::format(" and {} more", options.inputs.size() - 8);
  out += "</p>\n" + key_figures(report);
  if (!options.errors.empty() || !options.warnings.empty()) {
    out += "<section id=\"warnings\"><h2>Warnings</h2>\n";
    for (const auto* list : {&options.errors, &options.warnings}) {
      if (list->empty()) continue;
      out += fmt::format("<div class=\"{}\"><ul>\n", list == &options.errors ? "err" : "warn");
      for (size_t i = 0; i < list->size() && i < 200; ++i) out += "<li>" + html_escape((*list)[i].text()) + "</li>\n";
      if (list->size() > 200) out += fmt::format("<li>... and {} more</li>\n", list->size() - 200);
      out += "</ul></div>\n";
    }
    out += "</section>\n";
  }
  out += "<section id=\"time\"><h2>Where the device time goes</h2>\n" + breakdown_section(report) +
         kernel_types_section(report) + top_kernels_section(report) + "</section>\n";
  out += "<section id=\"idle\"><h2>Idle time and overlap</h2>\n" + idle_section(report) + overlap_section(report) +
         "</section>\n";
  out += "<section id=\"counters\"><h2>Launch queue</h2>\n" + counters_section(report) + "</section>\n";
  out += "<section id=\"collectives\"><h2>Collectives and stragglers</h2>\n" + collectives_section(report);
  if (const Table* t = find_table(report, "stragglers")) out += html_table(*t, "stragglers", {200, true});
  out += "</section>\n" + memory_section(report);
  // The critical path (issue 23): per rank and step by category, and across ranks at the collectives.
  if (const Table* t = find_table(report, "critical_path")) {
    out += "<section id=\"critical-path\"><h2>Critical path</h2>\n" + html_table(*t, "critical-path", {200, true});
    if (const Table* c = find_table(report, "cross_rank_path")) out += html_table(*c, "cross-rank-path", {200, true});
    out += "</section>\n";
  }
  out += "<section id=\"operators\"><h2>Operators</h2>\n";
  if (const Table* t = find_table(report, "operators")) {
    out += "<p class=\"meta\">Click a column's header to sort by it.</p>\n";
    out += html_table(without_json_only(*t), "operators", {kMaxOperatorRows, true});
  } else {
    out += missing("No operator table (left out with --only).");
  }
  out += "</section>\n<section id=\"inputs\"><h2>Inputs</h2>\n";
  if (const Table* t = find_table(report, "inputs")) out += html_table(*t, "inputs", {1024, true});
  out += "</section>\n";
  out += kSortScript;
  return out + "</body>\n</html>\n";
}

}  // namespace scaleprof::report
