// `scaleprof trace collectives`: collectives matched across ranks, their latency, skew, waits and
// bandwidth, a summary per collective type × message size, all-to-all imbalance and the clock
// alignment of the hosts. Rules in src/analysis/collective_match.h; JSON shapes: docs/trace-json.md.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "analysis/all_to_all_cost.h"
#include "analysis/collective_match.h"
#include "analysis/distribution.h"
#include "core/checked_sum.h"
#include "report/trace_cells.h"
#include "report/trace_report.h"

namespace scaleprof::report {

namespace {

Cell gbps_cell(double v) {
  return v >= 0 ? Cell(v, 3) : Cell::null();
}
Cell ns_or_null(int64_t ns) {
  return ns >= 0 ? us_cell(ns) : Cell::null();
}
Cell int_or_null(int64_t v) {
  return v >= 0 ? Cell(v) : Cell::null();
}

// Upper bound of the message-size bucket: 1 KiB, 4 KiB, 16 KiB, ... (powers of 4).
int64_t bucket_bound(int64_t bytes) {
  int64_t bound = 1024;
  while (bound < bytes && bound < (int64_t{1} << 60)) bound *= 4;
  return bound;
}

std::string bytes_label(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int unit = 0;
  int64_t v = bytes;
  while (v >= 1024 && v % 1024 == 0 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  return fmt::format("{} {}", v, kUnits[unit]);
}

int64_t time_origin(const analysis::CollectiveAnalysis& a) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const auto& m : a.calls) {
    for (const auto& t : m.ranks) origin = std::min(origin, t.start_ns);
  }
  return origin == std::numeric_limits<int64_t>::max() ? 0 : origin;
}

Table calls_table(const analysis::CollectiveAnalysis& a) {
  Table t;
  t.title = "Collectives matched across ranks (latency = shortest duration over ranks; bandwidth in GB/s)";
  t.columns = {{"group", "Group"},
               {"position", "Call"},
               {"step", "Step"},
               {"type", "Type"},
               {"bytes", "Bytes"},
               {"group_size", "Group size"},
               {"ranks", "Ranks seen"},
               {"status", "Status"},
               {"match", "Matched by"},
               {"uncertain", "Uncertain"},
               {"latency_us", "Latency (us)"},
               {"skew_us", "Skew (us)"},
               {"end_spread_us", "End spread (us)"},
               {"last_rank", "Last rank"},
               {"algbw_gbps", "Alg bw"},
               {"busbw_gbps", "Bus bw"},
               {"locality", "Locality"},
               {"reason", "Note"}};
  t.set_importance(Importance::kKey, {"group", "position"});
  t.set_importance(Importance::kUseful, {"step", "end_spread_us", "algbw_gbps", "reason"});
  t.set_importance(Importance::kDetail, {"group_size", "ranks", "locality", "match", "uncertain"});
  bool uncertain = false;
  for (const auto& m : a.calls) {
    uncertain |= m.uncertain;
    t.add_row({m.group.empty() ? Cell::null() : Cell(m.group), m.position, int_or_null(m.step), m.type,
               int_or_null(m.bytes), int_or_null(m.group_size), static_cast<int64_t>(m.ranks.size()),
               std::string(analysis::match_status_name(m.status)),
               m.method == analysis::MatchMethod::kNone ? Cell::null() : Cell(analysis::match_method_name(m.method)),
               m.uncertain ? "true" : "false", ns_or_null(m.latency_ns), ns_or_null(m.skew_ns),
               ns_or_null(m.end_spread_ns), int_or_null(m.last_rank), gbps_cell(m.algbw_gbps), gbps_cell(m.busbw_gbps),
               m.locality.empty() ? Cell::null() : Cell(m.locality), m.reason.empty() ? Cell::null() : Cell(m.reason)});
  }
  if (uncertain) t.title += "; uncertain: matched by order alone (see collective_matching)";
  if (!a.aligned) t.title += "; --no-align: times on each host's raw clock";
  return t;
}

// One row per call per rank (21,500 at 1,024 ranks of the bench): made on demand from the matched
// calls, which the table keeps alive, so the output is written row by row instead of held whole.
Table rank_table(std::shared_ptr<const analysis::CollectiveAnalysis> analysis) {
  const int64_t origin = time_origin(*analysis);
  Table t;
  t.title = "Collectives per rank (start relative to the earliest call; wait = latest start - own start)";
  t.columns = {{"group", "Group"},      {"position", "Call"},       {"type", "Type"},
               {"rank", "Rank"},        {"start_us", "Start (us)"}, {"duration_us", "Duration (us)"},
               {"wait_us", "Wait (us)"}};
  t.set_importance(Importance::kKey, {"group", "position", "rank"});
  t.set_importance(Importance::kUseful, {"start_us"});
  t.row_source = [a = std::move(analysis), origin](const RowVisitor& visit) {
    std::vector<Cell> row;
    for (const auto& m : a->calls) {
      for (const auto& r : m.ranks) {
        row = {m.group.empty() ? Cell::null() : Cell(m.group),
               m.position,
               m.type,
               r.rank,
               us_cell(r.start_ns - origin),
               us_cell(r.end_ns - r.start_ns),
               m.skew_ns < 0 ? Cell::null() : us_cell(r.wait_ns)};
        visit(row);
      }
    }
  };
  return t;
}

Table summary_table(const analysis::CollectiveAnalysis& a) {
  struct Acc {
    std::vector<int64_t> busbw_mbps, algbw_mbps;  // MB/s as integers, for the shared quantile code
    int64_t calls = 0, latency_ns = 0, skew_ns = 0, wait_ns = 0, bytes = 0;
    bool bandwidth_exact = true;  // false: a bandwidth past int64 MB/s (absurd sizes from input) was left out
    // Each sum is checked (core/checked_sum.h): one that would pass int64 is left out (null), never wrapped.
    bool latency_exact = true, skew_exact = true, wait_exact = true, bytes_exact = true;
  };
  // (type, complete, bucket) -> figures
  std::map<std::tuple<std::string, bool, int64_t>, Acc> groups;
  for (const auto& m : a.calls) {
    if (m.status == analysis::MatchStatus::kUnmatched || m.busbw_gbps < 0) continue;
    Acc& acc = groups[{m.type, m.status == analysis::MatchStatus::kMatched, bucket_bound(m.bytes)}];
    ++acc.calls;
    constexpr double kMaxMbps = 0x1p62;  // llround's result must fit int64
    if (m.busbw_gbps * 1e3 < kMaxMbps && m.algbw_gbps * 1e3 < kMaxMbps) {
      acc.busbw_mbps.push_back(std::llround(m.busbw_gbps * 1e3));
      acc.algbw_mbps.push_back(std::llround(m.algbw_gbps * 1e3));
    } else {
      acc.bandwidth_exact = false;
    }
    acc.latency_exact = add_checked(&acc.latency_ns, m.latency_ns) && acc.latency_exact;
    acc.skew_exact = add_checked(&acc.skew_ns, std::max<int64_t>(m.skew_ns, 0)) && acc.skew_exact;
    acc.bytes_exact = add_checked(&acc.bytes, m.bytes) && acc.bytes_exact;
    for (const auto& r : m.ranks) acc.wait_exact = add_checked(&acc.wait_ns, r.wait_ns) && acc.wait_exact;
  }
  Table t;
  t.title = "Bandwidth per collective type and message size (GB/s; all ranks: false = some ranks not loaded)";
  t.columns = {{"type", "Type"},
               {"size_bucket", "Size up to"},
               {"size_bucket_bytes", "Bucket bytes"},
               {"all_ranks", "All ranks"},
               {"calls", "Calls"},
               {"mean_bytes", "Mean bytes"},
               {"latency_us", "Latency sum (us)"},
               {"skew_us", "Skew sum (us)"},
               {"wait_us", "Wait sum (us)"},
               {"algbw_p50_gbps", "Alg bw p50"},
               {"busbw_min_gbps", "Bus bw min"},
               {"busbw_p10_gbps", "Bus bw p10"},
               {"busbw_p50_gbps", "Bus bw p50"},
               {"busbw_p90_gbps", "Bus bw p90"},
               {"busbw_max_gbps", "Bus bw max"}};
  t.set_importance(Importance::kKey, {"type", "size_bucket"});
  t.set_importance(Importance::kUseful, {"skew_us", "algbw_p50_gbps", "busbw_min_gbps", "busbw_max_gbps"});
  t.set_importance(Importance::kDetail, {"size_bucket_bytes", "all_ranks", "mean_bytes"});
  bool any_inexact = false;
  for (auto& [key, acc] : groups) {
    const auto& [type, complete, bound] = key;
    std::sort(acc.busbw_mbps.begin(), acc.busbw_mbps.end());
    std::sort(acc.algbw_mbps.begin(), acc.algbw_mbps.end());
    const bool bandwidth_exact = acc.bandwidth_exact;
    auto q = [bandwidth_exact](const std::vector<int64_t>& v, double p) {
      return bandwidth_exact ? Cell(analysis::quantile_sorted(v, p) / 1e3, 3) : Cell::null();
    };
    auto sum_cell = [&](int64_t ns, bool exact) {
      any_inexact |= !exact;
      return exact ? us_cell(ns) : Cell::null();
    };
    const int64_t n = acc.calls;
    any_inexact |= !acc.bytes_exact || !acc.bandwidth_exact;
    t.add_row({type, bytes_label(bound), bound, complete ? "true" : "false", n,
               acc.bytes_exact ? Cell(acc.bytes / n) : Cell::null(), sum_cell(acc.latency_ns, acc.latency_exact),
               sum_cell(acc.skew_ns, acc.skew_exact), sum_cell(acc.wait_ns, acc.wait_exact), q(acc.algbw_mbps, 0.5),
               q(acc.busbw_mbps, 0.0), q(acc.busbw_mbps, 0.1), q(acc.busbw_mbps, 0.5), q(acc.busbw_mbps, 0.9),
               q(acc.busbw_mbps, 1.0)});
  }
  if (any_inexact)
    t.title += "; null sums and bandwidths: they would pass int64 (292 years of nanoseconds, 8 EiB) and are left out";
  return t;
}

Table alltoall_table(const analysis::CollectiveAnalysis& a, const analysis::AlltoallCosts& costs) {
  std::vector<int64_t> cost_of(a.calls.size(), -1);
  for (const auto& c : costs.calls) cost_of[c.call] = c.cost_ns;
  Table t;
  t.title =
      "All-to-all: bytes per rank (imbalance = max sent / mean sent) and per peer (peer imbalance = max / mean "
      "bytes over pairs of distinct ranks; imbalance cost = latency x (1 - mean / max))";
  t.columns = {{"group", "Group"},
               {"position", "Call"},
               {"step", "Step"},
               {"annotation", "Annotation"},
               {"ranks", "Ranks seen"},
               {"send_min", "Sent min"},
               {"send_max", "Sent max"},
               {"recv_min", "Received min"},
               {"recv_max", "Received max"},
               {"imbalance", "Imbalance"},
               {"peer_max_bytes", "Peer max"},
               {"peer_mean_bytes", "Peer mean"},
               {"peer_imbalance", "Peer imbalance"},
               {"latency_us", "Latency (us)"},
               {"imbalance_cost_us", "Imbalance cost (us)"}};
  t.set_importance(Importance::kKey, {"group", "position"});
  t.set_importance(Importance::kUseful, {"step", "annotation", "peer_imbalance", "imbalance_cost_us"});
  t.set_importance(Importance::kDetail, {"ranks", "recv_min", "recv_max", "peer_mean_bytes"});
  for (size_t i = 0; i < a.calls.size(); ++i) {
    const auto& m = a.calls[i];
    if (m.type != "alltoall") continue;
    t.add_row({m.group.empty() ? Cell::null() : Cell(m.group), m.position, int_or_null(m.step),
               m.annotation.empty() ? Cell::null() : Cell(m.annotation), static_cast<int64_t>(m.ranks.size()),
               int_or_null(m.send_min), int_or_null(m.send_max), int_or_null(m.recv_min), int_or_null(m.recv_max),
               m.imbalance >= 0 ? Cell(m.imbalance, 3) : Cell::null(), int_or_null(m.peer_max),
               m.peer_mean >= 0 ? Cell(m.peer_mean, 1) : Cell::null(),
               m.peer_imbalance >= 0 ? Cell(m.peer_imbalance, 4) : Cell::null(), ns_or_null(m.latency_ns),
               ns_or_null(cost_of[i])});
  }
  return t;
}

// Bytes each rank sent each peer, from the split sizes: one row per call, rank and peer (calls whose
// every rank's splits are in the trace; Kineto keeps lists of at most 30 peers). Bounded per call
// (collective_match.h, peer_rows): at 1,024 ranks the whole matrices would be a million rows per call.
Table alltoall_peers_table(const analysis::CollectiveAnalysis& a) {
  Table t;
  t.title = "All-to-all: bytes each rank sent each peer (split sizes x row size)";
  t.columns = {{"group", "Group"}, {"position", "Call"}, {"step", "Step"},
               {"rank", "Rank"},   {"peer", "Peer"},     {"bytes", "Bytes"}};
  t.set_importance(Importance::kKey, {"group", "position", "rank", "peer"});
  bool cut = false;
  for (const auto& m : a.calls) {
    if (m.type != "alltoall" || m.peer_rows.empty()) continue;
    cut |= !m.peer_rows_whole;
    for (const analysis::AlltoallPeerRow& p : m.peer_rows) {
      t.add_row(
          {m.group.empty() ? Cell::null() : Cell(m.group), m.position, int_or_null(m.step), p.rank, p.peer, p.bytes});
    }
  }
  if (cut) {
    t.title += fmt::format(
        "; per call, of each rank's {} largest splits, the {} largest (a group of more ranks is not listed whole)",
        analysis::kAlltoallTopPeers, analysis::kAlltoallPeerRows);
  }
  return t;
}

Table alltoall_sums_table(const std::vector<analysis::AlltoallSum>& sums, bool by_step) {
  Table t;
  t.title = by_step ? "All-to-all per step: latency and the time its imbalance cost (sums over the calls)"
                    : "All-to-all per annotation (innermost record_function / nn.Module around the call)";
  t.columns = {{by_step ? "step" : "annotation", by_step ? "Step" : "Annotation"},
               {"calls", "Calls"},
               {"latency_us", "Latency sum (us)"},
               {"imbalance_cost_us", "Imbalance cost (us)"},
               {"cost_share", "Cost / latency"}};
  t.set_importance(Importance::kKey, {by_step ? "step" : "annotation"});
  bool inexact = false;
  for (const auto& s : sums) {
    Cell key = by_step ? int_or_null(s.step) : (s.key.empty() ? Cell::null() : Cell(s.key));
    inexact |= !s.exact;
    t.add_row({std::move(key), s.calls, s.exact ? us_cell(s.latency_ns) : Cell::null(),
               s.exact ? us_cell(s.cost_ns) : Cell::null(),
               s.exact && s.latency_ns > 0 ? Cell(static_cast<double>(s.cost_ns) / static_cast<double>(s.latency_ns), 3)
                                           : Cell::null()});
  }
  if (inexact) t.title += "; null sums would pass int64 and are left out";
  return t;
}

Table clocks_table(const analysis::CollectiveAnalysis& a) {
  Table t;
  t.title = fmt::format(
      "Clocks: {}; lowest/highest = the offsets causality allows, spread = IQR of the per-call differences over "
      "the calls used; alignment error = median end spread of all-reduce-like calls{}",
      a.aligned ? "offsets subtracted" : "--no-align: offsets estimated, not subtracted",
      a.aligned ? "" : " on the raw clocks");
  t.columns = {{"node", "Node"},
               {"ranks", "Ranks"},
               {"offset_us", "Offset (us)"},
               {"offset_lowest_us", "Lowest (us)"},
               {"offset_highest_us", "Highest (us)"},
               {"spread_us", "Spread (us)"},
               {"samples", "Calls used"},
               {"applied", "Applied"},
               {"alignment_error_us", "Alignment error (us)"}};
  t.set_importance(Importance::kKey, {"node"});
  t.set_importance(Importance::kUseful, {"spread_us", "samples"});
  t.set_importance(Importance::kDetail, {"offset_lowest_us", "offset_highest_us", "applied"});
  for (const auto& h : a.clocks) {
    const bool bounded = h.samples > 0;
    t.add_row({h.node, static_cast<int64_t>(h.ranks.size()), us_cell(h.estimate_ns),
               bounded ? us_cell(h.lowest_ns) : Cell::null(), bounded ? us_cell(h.highest_ns) : Cell::null(),
               ns_or_null(h.spread_ns), h.samples, a.aligned && !h.unshifted ? "true" : "false",
               ns_or_null(a.alignment_error_ns)});
  }
  if (a.clocks.empty()) {
    t.add_row({Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(), Cell::null(),
               Cell::null(), ns_or_null(a.alignment_error_ns)});
  }
  for (const auto& h : a.clocks) {
    if (h.unshifted) {
      t.title += fmt::format("; {} not shifted: its offset would move times out of the input bounds", h.node);
    }
    if (h.samples > 0 && h.bounds_conflict) {
      t.title += fmt::format(
          "; {}: the calls allow no offset (lowest > highest: calls mismatched, or the clocks "
          "drifted during the trace)",
          h.node);
    }
  }
  return t;
}

// How each process group's calls were lined up across its ranks, and whether the pairs are certain.
Table matching_table(const analysis::CollectiveAnalysis& a) {
  Table t;
  t.title =
      "Matching per process group (seq: by Seq; step position: k-th call in the same ProfilerStep; order: "
      "k-th call in the trace)";
  t.columns = {{"group", "Group"},     {"ranks", "Ranks"},       {"ranks_loaded", "Ranks loaded"}, {"calls", "Calls"},
               {"matched", "Matched"}, {"method", "Matched by"}, {"uncertain", "Uncertain"},       {"note", "Note"}};
  t.set_importance(Importance::kKey, {"group", "method"});
  t.set_importance(Importance::kUseful, {"uncertain", "note"});
  t.set_importance(Importance::kDetail, {"ranks", "ranks_loaded"});
  for (const auto& g : a.groups) {
    const std::string note =
        g.uncertain ? "matched by order alone: no Seq or ProfilerStep number ties the ranks' calls together; if "
                      "their profiler windows began at different calls, every pair is off by that many calls"
                    : std::string();
    t.add_row({g.group.empty() ? Cell::null() : Cell(g.group), g.ranks.empty() ? Cell::null() : Cell(g.ranks),
               g.ranks_loaded, g.calls, g.matched, std::string(analysis::match_method_name(g.method)),
               g.uncertain ? "true" : "false", note.empty() ? Cell::null() : Cell(note)});
  }
  return t;
}

TraceReport matching_and_clocks_tables(const analysis::CollectiveAnalysis& a) {
  TraceReport report;
  report.add("collective_matching", matching_table(a));
  report.add("clocks", clocks_table(a));
  return report;
}

}  // namespace

TraceReport collectives_tables(const std::vector<analysis::RankCollectives>& ranks, const TraceReportOptions& options) {
  return collectives_tables(analysis::compact_rows(ranks), options);
}

TraceReport collectives_tables(const std::shared_ptr<const analysis::CollectiveAnalysis>& matched) {
  const analysis::CollectiveAnalysis& a = *matched;
  TraceReport report;
  report.add("collective_summary", summary_table(a));
  report.add("collectives", calls_table(a));
  report.add("collective_ranks", rank_table(matched));
  const analysis::AlltoallCosts costs = analysis::alltoall_costs(a);
  report.add("alltoall", alltoall_table(a, costs));
  report.add("alltoall_peers", alltoall_peers_table(a));
  report.add("alltoall_steps", alltoall_sums_table(costs.by_step, true));
  report.add("alltoall_annotations", alltoall_sums_table(costs.by_annotation, false));
  report.add("collective_matching", matching_table(a));
  report.add("clocks", clocks_table(a));
  return report;
}

TraceReport collective_tables(analysis::CollectiveRows rows, const ReportSections& sections,
                              const TraceReportOptions& options) {
  analysis::MatchOptions match;
  match.gpus_per_node = options.gpus_per_node;
  match.align = options.align_clocks;
  std::shared_ptr<const analysis::CollectiveAnalysis> matched =
      std::make_shared<const analysis::CollectiveAnalysis>(analysis::match_collectives(rows, match));
  analysis::StragglerAnalysis stragglers;
  if (sections.stragglers) stragglers = analysis::find_stragglers(rows, *matched);
  rows = {};
  TraceReport report;
  if (sections.collectives) report = collectives_tables(matched);
  // `trace stragglers` alone: how its calls were matched and its clocks aligned, as collectives says.
  TraceReport context;
  if (sections.stragglers && !sections.collectives) context = matching_and_clocks_tables(*matched);
  matched.reset();
  auto append_all = [&report](TraceReport more) {
    for (size_t i = 0; i < more.tables.size(); ++i) report.add(std::move(more.keys[i]), std::move(more.tables[i]));
  };
  if (sections.stragglers) append_all(stragglers_tables(std::move(stragglers)));
  append_all(std::move(context));
  return report;
}

TraceReport collectives_tables(analysis::CollectiveRows rows, const TraceReportOptions& options) {
  ReportSections sections;
  sections.collectives = true;
  return collective_tables(std::move(rows), sections, options);
}

}  // namespace scaleprof::report
