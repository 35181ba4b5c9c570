// The "Where Scaling Is Lost" section of the scalability report (report/scalability_loss_section.h).
#include "report/scalability_loss_section.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include "report/scalability_explanation.h"

namespace scaleprof::report {

namespace {

// The cells of these tables (named apart from scalability_report.cc's, which a unity build may put beside
// them): a number, or null when undefined; a fraction as a percentage.
Cell loss_num(double v, int digits) {
  return std::isfinite(v) ? Cell(v, digits) : Cell::null();
}
Cell loss_pct(double fraction) {
  return std::isfinite(fraction) ? Cell(fraction * 100.0, 2) : Cell::null();
}

std::string json_number(double v) {
  return std::isfinite(v) ? fmt::format("{}", v) : std::string("null");
}

// The pipeline bubble's figures beside its points (analysis/scaling_loss.h, LossCause): each scale's p and
// m, the bubble and the ideal (p-1)/(m+p-1) in percent of the profiled steps, and the ideal's points.
std::string pipeline_json(const analysis::ScaleLoss& l, const std::string& cause) {
  for (const analysis::LossCause& c : l.causes) {
    if (c.name != cause) continue;
    auto count = [](int64_t v) { return v > 0 ? fmt::format("{}", v) : std::string("null"); };
    return fmt::format(
        ", \"stages_from\": {}, \"stages_to\": {}, \"micro_batches_from\": {}, \"micro_batches_to\": {}, "
        "\"bubble_pct_of_steps_from\": {}, \"bubble_pct_of_steps_to\": {}, \"ideal_pct_of_steps_from\": {}, "
        "\"ideal_pct_of_steps_to\": {}, \"ideal_pts\": {}",
        count(c.stages0), count(c.stages1), count(c.micro_batches0), count(c.micro_batches1),
        json_number(c.step_fraction0 * 100.0), json_number(c.step_fraction1 * 100.0),
        json_number(c.ideal_fraction0 * 100.0), json_number(c.ideal_fraction1 * 100.0),
        json_number(c.ideal_points * 100.0));
  }
  return "";
}

// The `causes` list of a scaling_loss row: each named cause with its points, its seconds per epoch at
// both scales and what grew, then the unattributed rest (no seconds: it is not a part of the epoch),
// so that the list adds up to lost_pts as the chart and the sentences do.
std::string loss_causes_json(const analysis::ScaleLoss& l) {
  std::string out = "[";
  auto item = [&out, &l](const std::string& cause, double points, double from, double to, const std::string& detail,
                         const std::vector<analysis::CauseDetail>& parts = {}) {
    out += fmt::format(
        "{}{{\"cause\": {}, \"pts\": {}, \"seconds_per_epoch_from\": {}, \"seconds_per_epoch_to\": {}, "
        "\"detail\": {}",
        out.size() > 1 ? ", " : "", json_quote(cause), json_number(points * 100.0), json_number(from), json_number(to),
        json_quote(detail));
    if (cause == analysis::kPipelineBubbleCause) out += pipeline_json(l, cause);
    // A cause's named parts (communication's all-to-all imbalance): inside its pts, not beside them.
    if (!parts.empty()) {
      out += ", \"parts\": [";
      for (size_t i = 0; i < parts.size(); ++i) {
        const analysis::CauseDetail& d = parts[i];
        out +=
            fmt::format("{}{{\"part\": {}, \"pts\": {}, \"seconds_per_epoch_from\": {}, \"seconds_per_epoch_to\": {}}}",
                        i > 0 ? ", " : "", json_quote(d.name), json_number(d.points * 100.0), json_number(d.seconds0),
                        json_number(d.seconds1));
      }
      out += "]";
    }
    out += "}";
  };
  for (const analysis::LossCause& c : l.causes)
    item(c.name, c.points, c.seconds0, c.seconds1, cause_detail(c, l), c.details);
  if (analysis::is_attributed(l.basis) || !l.causes.empty()) {
    item(analysis::kUnattributed, l.rest, tables::kNaN, tables::kNaN, "the loss beyond the causes named");
  } else {
    item(analysis::kUnattributed, l.rest, tables::kNaN, tables::kNaN,
         fmt::format("nothing attributed on basis {}", analysis::loss_basis_name(l.basis)));
  }
  return out + "]";
}

// The `gains` list of a scaling_loss row (analysis/whatif_gains.h): what fixing each cause would gain,
// largest first, with the epoch time it predicts.
std::string loss_gains_json(const analysis::ScaleLoss& l) {
  std::string out = "[";
  for (const analysis::CauseGain& g : l.gains) {
    out += fmt::format(
        "{}{{\"cause\": {}, \"pts\": {}, \"seconds_per_epoch\": {}, \"predicted_epoch_s\": {}, \"detail\": {}, "
        "\"rank\": {}}}",
        out.size() > 1 ? ", " : "", json_quote(g.name), json_number(g.points * 100.0), json_number(g.seconds),
        json_number(g.predicted_epoch_s), json_quote(gain_detail(g, l)),
        g.rank >= 0 ? fmt::format("{}", g.rank) : "null");
  }
  return out + "]";
}

// A cause's column in the loss tables: "<cause>_pts", "<Cause> (pts)".
Column cause_column(const std::string& cause) {
  std::string key = cause;
  std::replace(key.begin(), key.end(), '-', '_');
  std::replace(key.begin(), key.end(), ' ', '_');
  std::string title = cause;
  if (!title.empty()) title[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(title[0])));
  return {key + "_pts", title + " (pts)"};
}

// What each rank was doing: the exclusive split of the rows that lead with the what-if gains.
Table split_table(const ScalabilityAnalysis& a, const std::vector<std::string>& causes) {
  Table t;
  t.title =
      "What each rank was doing: the lost efficiency split into exclusive parts of the epoch (percentage points; "
      "the causes overlap in what fixing them gains, never here)";
  t.columns = {{"strategy", "Strategy"},
               {"from_workers", "From workers"},
               {"to_workers", "To workers"},
               {"lost_pts", "Lost (pts)"}};
  for (const std::string& c : causes) t.columns.push_back(cause_column(c));
  t.columns.push_back({"unattributed_pts", "Unattributed (pts)"});
  t.set_importance(Importance::kKey, {"strategy", "from_workers", "to_workers"});
  for (const SeriesResult& sr : a.series) {
    for (const analysis::ScaleLoss& l : sr.losses) {
      if (l.gains.empty()) continue;
      std::vector<Cell> row = {sr.series, l.n0, l.n1, loss_pct(l.lost)};
      for (const std::string& name : causes) {
        Cell cell = Cell::null();
        for (const analysis::LossCause& c : l.causes) {
          if (c.name == name) cell = loss_pct(c.points);
        }
        row.push_back(cell);
      }
      row.push_back(loss_pct(l.rest));
      t.add_row(std::move(row));
    }
  }
  return t;
}

// The user's --what-if rows: the epoch and step time predicted at each scale.
Table what_if_table(const ScalabilityAnalysis& a) {
  Table t;
  t.title =
      "What if: the profiled steps of every rank re-timed under each change (what-if model), applied to the "
      "time in the steps";
  t.columns = {{"series", "Strategy"},
               {"workers", "Workers"},
               {"what_if", "What if"},
               {"epoch_s", "Epoch (s)"},
               {"predicted_epoch_s", "Predicted epoch (s)"},
               {"gain_s", "Gain (s)"},
               {"gain_pts", "Gain (% of epoch)"},
               {"step_ms", "Step (ms)"},
               {"predicted_step_ms", "Predicted step (ms)"},
               {"predicted_step_ms_min", "Predicted step, fastest (ms)"},
               {"predicted_step_ms_max", "Predicted step, slowest (ms)"},
               {"basis", "", true}};
  t.set_importance(Importance::kKey, {"series", "workers", "what_if"});
  t.set_importance(Importance::kDetail, {"predicted_step_ms_min", "predicted_step_ms_max"});
  for (const analysis::WhatIfRow& r : a.what_ifs) {
    const analysis::WhatIfOutcome& o = r.outcome;
    const double gain = o.epoch_s - o.predicted_epoch_s;
    t.add_row({r.series, r.workers, r.spec.text, loss_num(o.epoch_s, 3), loss_num(o.predicted_epoch_s, 3),
               loss_num(gain, 3), loss_num(o.epoch_s > 0 ? 100.0 * gain / o.epoch_s : tables::kNaN, 1),
               loss_num(o.step_ms, 2), loss_num(o.predicted_step_ms, 2), loss_num(o.predicted_step_ms_min, 2),
               loss_num(o.predicted_step_ms_max, 2),
               std::string("every rank's profiled steps re-timed across the collectives matched between ranks, the "
                           "change applied to the time in the steps of the epoch")});
  }
  return t;
}

// The epoch time projected by the what-if model beside Amdahl's.
Table model_projection_table(const ScalabilityAnalysis& a) {
  Table t;
  t.title = "Projection to more workers from the what-if model (a projection, not a measurement), beside Amdahl's";
  t.columns = {{"series", "Strategy"},
               {"workers", "Workers"},
               {"predicted_epoch_s", "Model epoch (s)"},
               {"amdahl_epoch_s", "Amdahl epoch (s)"},
               {"assumptions", "Assumptions"}};
  t.set_importance(Importance::kKey, {"series", "workers"});
  t.set_importance(Importance::kDetail, {"assumptions"});
  for (const SeriesResult& sr : a.series) {
    for (int k = 0; k < 2; ++k) {
      const analysis::ModelProjection& p = sr.model_projection[k];
      if (!p.ok) continue;
      double amdahl = tables::kNaN;
      for (const ScaleGroup& g : a.groups) {
        if (g.series == sr.series && g.workers == sr.amdahl.base_workers && g.epoch.count > 0 &&
            sr.projected_speedup[k] > 0) {
          amdahl = g.epoch.mean / sr.projected_speedup[k];
        }
      }
      t.add_row({sr.series, p.workers, loss_num(p.predicted_epoch_s, 3), loss_num(amdahl, 3), p.assumptions});
    }
  }
  return t;
}

}  // namespace

std::optional<ReportSection> scaling_loss_section(const ScalabilityAnalysis& a) {
  bool any_loss = false;
  for (const SeriesResult& sr : a.series) any_loss |= sr.has_loss();
  if (!any_loss && a.best.empty()) return std::nullopt;
  ReportSection s;
  s.key = "scaling_loss";
  s.title = "Where Scaling Is Lost";
  for (const SeriesResult& sr : a.series) {
    for (const std::string& line : loss_sentences(sr)) s.notes.push_back(line);
  }
  for (const std::string& line : best_strategy_sentences(a)) s.notes.push_back(line);
  // One column per cause the analysis attributes (in order of first appearance), so a new cause
  // slots in as a column; what is not attributed is in other_pts. A row with the what-if model's
  // gains shows them (what fixing the cause would gain); the others the exclusive split.
  std::vector<std::string> causes;
  bool any_gains = false;
  for (const SeriesResult& sr : a.series) {
    for (const analysis::ScaleLoss& l : sr.losses) {
      any_gains |= !l.gains.empty();
      for (const analysis::LossCause& c : l.causes) {
        if (std::find(causes.begin(), causes.end(), c.name) == causes.end()) causes.push_back(c.name);
      }
      for (const analysis::CauseGain& g : l.gains) {
        if (std::find(causes.begin(), causes.end(), g.name) == causes.end()) causes.push_back(g.name);
      }
    }
  }
  Table t;
  t.title = any_gains
                ? "Efficiency lost between each strategy's smallest scale and each larger one, and what fixing "
                  "each cause would gain (percentage points, what-if model)"
                : "Efficiency lost between each strategy's smallest scale and each larger one (percentage points)";
  t.columns = {{"strategy", "Strategy"},
               {"from_workers", "From workers"},
               {"to_workers", "To workers"},
               {"efficiency_pct", "Efficiency (%)"},
               {"lost_pts", "Lost (pts)"}};
  for (const std::string& c : causes) t.columns.push_back(cause_column(c));
  // Communication's all-to-all imbalance: a part of the communication column, not a cause beside it.
  bool any_alltoall = false;
  for (const SeriesResult& sr : a.series) {
    for (const analysis::ScaleLoss& l : sr.losses) {
      for (const analysis::LossCause& c : l.causes) {
        for (const analysis::CauseDetail& d : c.details) any_alltoall |= d.name == analysis::kAlltoallImbalanceDetail;
      }
    }
  }
  if (any_alltoall) t.columns.push_back({"alltoall_imbalance_pts", "Of communication: all-to-all imbalance (pts)"});
  // FSDP/ZeRO's exposed all-gathers and reduce-scatters: the other parts of communication, summed (each
  // part's own points are in the JSON causes and the sentences).
  bool any_fsdp = false;
  bool any_bubble = false;
  for (const SeriesResult& sr : a.series) {
    for (const analysis::ScaleLoss& l : sr.losses) {
      for (const analysis::LossCause& c : l.causes) {
        any_bubble |= c.name == analysis::kPipelineBubbleCause;
        for (const analysis::CauseDetail& d : c.details) any_fsdp |= d.name != analysis::kAlltoallImbalanceDetail;
      }
    }
  }
  if (any_fsdp) t.columns.push_back({"fsdp_exposed_pts", "Of communication: FSDP all-gathers, reduce-scatters (pts)"});
  // The pipeline bubble beside its ideal (p-1)/(m+p-1): the points the ideal would cost, and both as
  // percentages of the profiled steps at each scale.
  if (any_bubble) {
    t.columns.push_back({"pipeline_bubble_ideal_pts", "Pipeline bubble at the ideal (p-1)/(m+p-1) (pts)"});
    t.columns.push_back({"pipeline_bubble_step_pct_from", "Pipeline bubble, from (% of steps)"});
    t.columns.push_back({"pipeline_ideal_step_pct_from", "Ideal bubble, from (% of steps)"});
    t.columns.push_back({"pipeline_bubble_step_pct_to", "Pipeline bubble, to (% of steps)"});
    t.columns.push_back({"pipeline_ideal_step_pct_to", "Ideal bubble, to (% of steps)"});
  }
  if (any_gains) t.columns.push_back({"interaction_pts", "Interaction (pts)"});
  t.columns.push_back({"unattributed_pts", "Unattributed (pts)"});
  if (any_gains) t.columns.push_back({"all_fixed_epoch_s", "Epoch with all fixed (s)"});
  t.columns.push_back({"non_computation_from_pct", "Non-computation op. self time, from (%)"});
  t.columns.push_back({"non_computation_to_pct", "Non-computation op. self time, to (%)"});
  t.columns.push_back({"basis", "Basis"});
  // JSON only: the causes as a list, and other_pts, unattributed_pts's name before it was renamed.
  t.columns.push_back({"causes", "", true});
  t.columns.push_back({"other_pts", "", true});
  // JSON only: the measure of the cause columns, the gains as a list, and the rest beyond all fixes.
  t.columns.push_back({"measure", "", true});
  t.columns.push_back({"gains", "", true});
  t.columns.push_back({"gains_rest_pts", "", true});
  t.set_importance(Importance::kKey, {"strategy", "from_workers", "to_workers"});
  t.set_importance(Importance::kUseful, {"basis"});
  t.set_importance(Importance::kDetail, {"non_computation_from_pct", "non_computation_to_pct",
                                         "pipeline_bubble_step_pct_from", "pipeline_ideal_step_pct_from"});
  for (const SeriesResult& sr : a.series) {
    for (const analysis::ScaleLoss& l : sr.losses) {
      const bool gains = !l.gains.empty();
      std::vector<Cell> row = {sr.series, l.n0, l.n1, loss_pct(l.efficiency), loss_pct(l.lost)};
      for (const std::string& name : causes) {
        Cell cell = Cell::null();
        if (gains) {
          for (const analysis::CauseGain& g : l.gains) {
            if (g.name == name) cell = loss_pct(g.points);
          }
        } else {
          for (const analysis::LossCause& c : l.causes) {
            if (c.name == name) cell = loss_pct(c.points);
          }
        }
        row.push_back(cell);
      }
      if (any_alltoall) {
        Cell cell = Cell::null();
        for (const analysis::LossCause& c : l.causes) {
          for (const analysis::CauseDetail& d : c.details) {
            if (d.name == analysis::kAlltoallImbalanceDetail) cell = loss_pct(d.points);
          }
        }
        row.push_back(cell);
      }
      if (any_fsdp) {
        double points = 0;
        bool any = false;
        for (const analysis::LossCause& c : l.causes) {
          for (const analysis::CauseDetail& d : c.details) {
            if (d.name == analysis::kAlltoallImbalanceDetail) continue;
            points += d.points;
            any = true;
          }
        }
        row.push_back(any ? loss_pct(points) : Cell::null());
      }
      if (any_bubble) {
        const analysis::LossCause* bubble = nullptr;
        for (const analysis::LossCause& c : l.causes) {
          if (c.name == analysis::kPipelineBubbleCause) bubble = &c;
        }
        if (bubble != nullptr) {
          for (double v : {bubble->ideal_points, bubble->step_fraction0, bubble->ideal_fraction0,
                           bubble->step_fraction1, bubble->ideal_fraction1})
            row.push_back(loss_pct(v));
        } else {
          row.insert(row.end(), 5, Cell::null());
        }
      }
      const double rest = gains ? l.gains_rest : l.rest;
      if (any_gains) row.push_back(gains ? loss_pct(l.interaction) : Cell::null());
      row.push_back(loss_pct(rest));
      if (any_gains) row.push_back(gains ? loss_num(l.all_fixed_epoch_s, 3) : Cell::null());
      row.push_back(loss_pct(l.non_computation0));
      row.push_back(loss_pct(l.non_computation1));
      row.emplace_back(std::string(analysis::loss_basis_name(l.basis)));
      row.emplace_back(JsonText{loss_causes_json(l)});
      row.push_back(loss_pct(rest));
      row.emplace_back(std::string(gains ? "what-if" : "exclusive split"));
      row.emplace_back(JsonText{loss_gains_json(l)});
      row.push_back(gains ? loss_pct(l.gains_rest) : Cell::null());
      t.add_row(std::move(row));
    }
  }
  Table b;
  b.title = "Best strategy per scale (lowest mean epoch time)";
  b.columns = {{"workers", "Workers"},     {"strategy", "Best strategy"},    {"mean_s", "Mean epoch (s)"},
               {"runner_up", "Runner-up"}, {"runner_up_s", "Runner-up (s)"}, {"candidates", "Strategies"}};
  b.set_importance(Importance::kKey, {"workers"});
  b.set_importance(Importance::kUseful, {"runner_up", "runner_up_s"});
  b.set_importance(Importance::kDetail, {"candidates"});
  for (const analysis::BestAtScale& x : a.best) {
    b.add_row({x.workers, x.strategy, loss_num(x.seconds, 3), x.runner_up.empty() ? Cell::null() : Cell(x.runner_up),
               loss_num(x.runner_up_seconds, 3), x.candidates});
  }
  s.table_keys = {"scaling_loss"};
  s.tables.push_back(std::move(t));
  if (any_gains) {
    s.table_keys.emplace_back("scaling_split");
    s.tables.push_back(split_table(a, causes));
  }
  if (!a.what_ifs.empty()) {
    s.table_keys.emplace_back("what_if");
    s.tables.push_back(what_if_table(a));
  }
  if (Table p = model_projection_table(a); !p.rows.empty()) {
    s.table_keys.emplace_back("model_projection");
    s.tables.push_back(std::move(p));
  }
  s.table_keys.emplace_back("best_strategy");
  s.tables.push_back(std::move(b));
  return s;
}

}  // namespace scaleprof::report
