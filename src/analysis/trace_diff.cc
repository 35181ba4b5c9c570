#include "analysis/trace_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "analysis/distribution.h"

namespace scaleprof::analysis {

namespace {

// One figure of one side on every (rank, kept step) of that side, ranks one after another.
struct Slots {
  std::vector<int64_t> count;
  std::vector<int64_t> ns;
  std::vector<std::string> names;  // the names summed into it, in order of first appearance
  std::string path;

  void add(const Slots& other) {
    for (size_t i = 0; i < ns.size(); ++i) {
      count[i] += other.count[i];
      ns[i] += other.ns[i];
    }
    for (const std::string& n : other.names) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
};

// Where each rank's steps start among a side's slots.
struct Layout {
  std::vector<size_t> offset;
  size_t size = 0;
  explicit Layout(const DiffSide& side) {
    for (const DiffRankSummary& r : side.ranks) {
      offset.push_back(size);
      size += r.steps.size();
    }
  }
  Slots empty() const { return {std::vector<int64_t>(size, 0), std::vector<int64_t>(size, 0), {}, {}}; }
};

DiffFigure figure(std::vector<int64_t> values, const std::vector<int64_t>& counts, double samples) {
  DiffFigure f;
  if (values.empty()) return f;
  std::sort(values.begin(), values.end());
  const double scale = samples > 0 ? samples : 1.0;
  f.median = quantile_sorted(values, 0.5) / scale;
  f.spread = (quantile_sorted(values, 0.75) - quantile_sorted(values, 0.25)) / scale;
  std::vector<int64_t> c = counts;
  std::sort(c.begin(), c.end());
  f.count = c.empty() ? std::numeric_limits<double>::quiet_NaN() : quantile_sorted(c, 0.5);
  return f;
}

// A figure absent from one side is 0 on each of its steps (a side without steps has none).
DiffFigure absent_figure(size_t slots) {
  return slots == 0 ? DiffFigure{} : DiffFigure{0.0, 0.0, 0.0};
}

void finish(DiffRow* row) {
  const double a = std::isfinite(row->a.median) ? row->a.median : 0.0;
  const double b = std::isfinite(row->b.median) ? row->b.median : 0.0;
  row->delta = b - a;
  row->change_pct = a != 0 ? 100.0 * row->delta / a : std::numeric_limits<double>::quiet_NaN();
  const double spread_a = std::isfinite(row->a.spread) ? row->a.spread : 0.0;
  const double spread_b = std::isfinite(row->b.spread) ? row->b.spread : 0.0;
  row->significant = row->delta != 0 && std::abs(row->delta) > std::max(spread_a, spread_b);
}

void order_rows(std::vector<DiffRow>* rows) {
  std::stable_sort(rows->begin(), rows->end(), [](const DiffRow& x, const DiffRow& y) {
    if (x.significant != y.significant) return x.significant;
    if (std::abs(x.delta) != std::abs(y.delta)) return std::abs(x.delta) > std::abs(y.delta);
    return x.name < y.name;
  });
}

std::string names_text(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  return names.size() == 1 ? names[0] : fmt::format("{} (+{} more)", names[0], names.size() - 1);
}

DiffRow make_row(const Slots* a, const Slots* b, double scale_a, double scale_b, size_t slots_a, size_t slots_b) {
  DiffRow row;
  row.a = a != nullptr ? figure(a->ns, a->count, scale_a) : absent_figure(slots_a);
  row.b = b != nullptr ? figure(b->ns, b->count, scale_b) : absent_figure(slots_b);
  const Slots* first = a != nullptr ? a : b;
  row.name = names_text(first->names);
  row.path = first->path;
  if (a != nullptr && b != nullptr) {
    const std::string nb = names_text(b->names);
    if (nb != row.name) row.name_b = nb;
    if (b->path != row.path) row.path_b = b->path;
  }
  finish(&row);
  return row;
}

std::string rank_list(const DiffSide& side) {
  std::string out;
  for (const DiffRankSummary& r : side.ranks) out += (out.empty() ? "" : ",") + std::to_string(r.rank);
  return out;
}

void find_problems(const DiffSide& a, const DiffSide& b, std::vector<Diagnostic>* problems) {
  const DiffSide* sides[2] = {&a, &b};
  const char* labels[2] = {"A", "B"};
  for (int s = 0; s < 2; ++s) {
    for (const DiffRankSummary& r : sides[s]->ranks) {
      if (!r.has_steps) {
        problems->push_back(
            {Severity::kError, "",
             fmt::format(
                 "{}: rank {} ({}) has no ProfilerStep#N annotations: its whole trace is taken as one step, so its "
                 "figures are whole-trace totals, not per step",
                 labels[s], r.rank, r.path)});
      }
    }
  }
  std::set<int64_t> ranks_a, ranks_b;
  for (const DiffRankSummary& r : a.ranks) ranks_a.insert(r.rank);
  for (const DiffRankSummary& r : b.ranks) ranks_b.insert(r.rank);
  if (ranks_a != ranks_b) {
    auto missing = [](const std::set<int64_t>& have, const std::set<int64_t>& other) {
      std::string out;
      for (int64_t r : other) {
        if (!have.contains(r)) out += (out.empty() ? "" : ",") + std::to_string(r);
      }
      return out;
    };
    const std::string not_in_b = missing(ranks_b, ranks_a);
    const std::string not_in_a = missing(ranks_a, ranks_b);
    problems->push_back({Severity::kWarning, "",
                         fmt::format("the sides have different ranks: A has {} rank(s) ({}), B has {} ({}){}{}; each "
                                     "side's figures are medians "
                                     "over its own ranks",
                                     a.ranks.size(), rank_list(a), b.ranks.size(), rank_list(b),
                                     not_in_b.empty() ? "" : fmt::format("; B lacks rank(s) {}", not_in_b),
                                     not_in_a.empty() ? "" : fmt::format("; A lacks rank(s) {}", not_in_a))});
  }
  auto step_text = [](const DiffSide& side) {
    std::set<int64_t> steps;
    for (const DiffRankSummary& r : side.ranks) {
      if (r.has_steps) steps.insert(r.steps.begin(), r.steps.end());
    }
    std::string out;
    for (int64_t s : steps) out += (out.empty() ? "" : ",") + std::to_string(s);
    return std::pair{steps.size(), out};
  };
  const auto [count_a, text_a] = step_text(a);
  const auto [count_b, text_b] = step_text(b);
  if (count_a != count_b && count_a > 0 && count_b > 0) {
    problems->push_back({Severity::kWarning, "",
                         fmt::format("the sides have different numbers of steps after warm-up: A {} (steps {}), B {} "
                                     "(steps {}); medians are over "
                                     "each side's own steps",
                                     count_a, text_a, count_b, text_b)});
  }
}

}  // namespace

std::string_view diff_match_name(DiffMatch match, bool kernel) {
  switch (match) {
    case DiffMatch::kSame:
      return kernel ? "launch+name" : "name";
    case DiffMatch::kLaunch:
      return "launch";
    case DiffMatch::kName:
      return "name";
    case DiffMatch::kOnlyA:
      return "only A";
    case DiffMatch::kOnlyB:
      return "only B";
  }
  return "";
}

TraceDiff diff_traces(const DiffSide& a, const DiffSide& b) {
  TraceDiff out;
  find_problems(a, b, &out.problems);
  out.per_sample = a.samples_per_step > 0 && b.samples_per_step > 0 && a.samples_per_step != b.samples_per_step;
  const double scale_a = out.per_sample ? a.samples_per_step : 0;
  const double scale_b = out.per_sample ? b.samples_per_step : 0;
  const Layout la(a), lb(b);

  // Steps: wall time, and GPU busy where a side has device work.
  auto step_slots = [](const DiffSide& side, const Layout& layout, bool busy, const char* name) {
    Slots s = layout.empty();
    s.names = {name};
    for (size_t r = 0; r < side.ranks.size(); ++r) {
      const DiffRankSummary& rank = side.ranks[r];
      for (size_t k = 0; k < rank.steps.size(); ++k) {
        s.ns[layout.offset[r] + k] = busy ? rank.gpu_busy_ns[k] : rank.step_ns[k];
        s.count[layout.offset[r] + k] = 1;
      }
    }
    return s;
  };
  {
    const Slots sa = step_slots(a, la, false, "step");
    const Slots sb = step_slots(b, lb, false, "step");
    out.steps.push_back(make_row(&sa, &sb, scale_a, scale_b, la.size, lb.size));
    bool device = false;
    for (const DiffSide* side : {&a, &b}) {
      for (const DiffRankSummary& r : side->ranks) device |= r.has_device_work;
    }
    if (device) {
      const Slots ga = step_slots(a, la, true, "gpu_busy");
      const Slots gb = step_slots(b, lb, true, "gpu_busy");
      out.steps.push_back(make_row(&ga, &gb, scale_a, scale_b, la.size, lb.size));
    }
  }

  // Operators by name.
  auto operator_slots = [](const DiffSide& side, const Layout& layout) {
    std::vector<std::pair<std::string, Slots>> ops;  // in order of first appearance
    std::map<std::string, size_t> index;
    for (size_t r = 0; r < side.ranks.size(); ++r) {
      for (const DiffOperator& op : side.ranks[r].operators) {
        auto [it, inserted] = index.try_emplace(op.name, ops.size());
        if (inserted) {
          ops.emplace_back(op.name, layout.empty());
          ops.back().second.names = {op.name};
        }
        Slots& s = ops[it->second].second;
        for (size_t k = 0; k < op.per_step.ns.size(); ++k) {
          s.count[layout.offset[r] + k] += op.per_step.count[k];
          s.ns[layout.offset[r] + k] += op.per_step.ns[k];
        }
      }
    }
    return std::pair{std::move(ops), std::move(index)};
  };
  {
    auto [ops_a, index_a] = operator_slots(a, la);
    auto [ops_b, index_b] = operator_slots(b, lb);
    for (const auto& [name, slots] : ops_a) {
      auto it = index_b.find(name);
      const Slots* other = it == index_b.end() ? nullptr : &ops_b[it->second].second;
      DiffRow row = make_row(&slots, other, scale_a, scale_b, la.size, lb.size);
      row.match = other != nullptr ? DiffMatch::kSame : DiffMatch::kOnlyA;
      out.operators.push_back(std::move(row));
    }
    for (const auto& [name, slots] : ops_b) {
      if (index_a.contains(name)) continue;
      DiffRow row = make_row(nullptr, &slots, scale_a, scale_b, la.size, lb.size);
      row.match = DiffMatch::kOnlyB;
      out.operators.push_back(std::move(row));
    }
  }

  // Kernels: by (path, type, name), then (path, type), then name.
  struct Group {
    std::string path;
    KernelType type;
    std::string name;
    Slots slots;
    bool matched = false;
  };
  auto kernel_groups = [](const DiffSide& side, const Layout& layout) {
    std::vector<Group> groups;
    std::map<std::tuple<std::string, int, std::string>, size_t> index;
    for (size_t r = 0; r < side.ranks.size(); ++r) {
      for (const DiffKernel& kern : side.ranks[r].kernels) {
        auto [it, inserted] =
            index.try_emplace(std::tuple{kern.path, static_cast<int>(kern.type), kern.name}, groups.size());
        if (inserted) {
          groups.push_back({kern.path, kern.type, kern.name, layout.empty()});
          groups.back().slots.names = {kern.name};
          groups.back().slots.path = kern.path;
        }
        Slots& s = groups[it->second].slots;
        for (size_t k = 0; k < kern.per_step.ns.size(); ++k) {
          s.count[layout.offset[r] + k] += kern.per_step.count[k];
          s.ns[layout.offset[r] + k] += kern.per_step.ns[k];
        }
      }
    }
    return groups;
  };
  std::vector<Group> ga = kernel_groups(a, la);
  std::vector<Group> gb = kernel_groups(b, lb);
  auto add_kernel_row = [&](const Slots* sa, const Slots* sb, KernelType type, DiffMatch match) {
    DiffRow row = make_row(sa, sb, scale_a, scale_b, la.size, lb.size);
    row.type = type;
    row.match = match;
    out.kernels.push_back(std::move(row));
  };
  // Level 1: the same launch path, type and name.
  {
    std::map<std::tuple<std::string, int, std::string>, size_t> index_b;
    for (size_t j = 0; j < gb.size(); ++j)
      index_b.emplace(std::tuple{gb[j].path, static_cast<int>(gb[j].type), gb[j].name}, j);
    for (Group& g : ga) {
      auto it = index_b.find(std::tuple{g.path, static_cast<int>(g.type), g.name});
      if (it == index_b.end()) continue;
      g.matched = gb[it->second].matched = true;
      add_kernel_row(&g.slots, &gb[it->second].slots, g.type, DiffMatch::kSame);
    }
  }
  // Levels 2 and 3: what is left, summed per side by a coarser key present on both sides.
  auto match_by = [&](auto key_of, DiffMatch match) {
    std::map<decltype(key_of(ga[0])), std::pair<std::vector<size_t>, std::vector<size_t>>> keys;
    for (size_t i = 0; i < ga.size(); ++i) {
      if (!ga[i].matched) keys[key_of(ga[i])].first.push_back(i);
    }
    for (size_t j = 0; j < gb.size(); ++j) {
      if (!gb[j].matched) keys[key_of(gb[j])].second.push_back(j);
    }
    for (auto& [key, members] : keys) {
      if (members.first.empty() || members.second.empty()) continue;
      Slots sa = la.empty();
      Slots sb = lb.empty();
      sa.path = ga[members.first[0]].path;
      sb.path = gb[members.second[0]].path;
      for (size_t i : members.first) {
        sa.add(ga[i].slots);
        ga[i].matched = true;
      }
      for (size_t j : members.second) {
        sb.add(gb[j].slots);
        gb[j].matched = true;
      }
      add_kernel_row(&sa, &sb, ga[members.first[0]].type, match);
    }
  };
  if (!ga.empty() && !gb.empty()) {
    // Only launches that are known: an empty path says nothing about what launched the work.
    match_by(
        [](const Group& g) {
          return std::tuple{g.path.empty() ? std::string("\x1f") + g.name : g.path, static_cast<int>(g.type)};
        },
        DiffMatch::kLaunch);
    match_by([](const Group& g) { return g.name; }, DiffMatch::kName);
  }
  for (const Group& g : ga) {
    if (!g.matched) add_kernel_row(&g.slots, nullptr, g.type, DiffMatch::kOnlyA);
  }
  for (const Group& g : gb) {
    if (!g.matched) add_kernel_row(nullptr, &g.slots, g.type, DiffMatch::kOnlyB);
  }

  order_rows(&out.operators);
  order_rows(&out.kernels);
  return out;
}

}  // namespace scaleprof::analysis
