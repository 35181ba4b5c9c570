#include "analysis/module_flops.h"

#include <algorithm>
#include <map>
#include <utility>

#include "analysis/flops.h"
#include "analysis/phases.h"
#include "analysis/profiler_steps.h"
#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";

// What the sweep over one thread meets: regions that are not forward (backward, optimizer, data
// loading), module calls, and counted calls. At one start and end, enclosing kinds come first.
enum class ItemKind : uint8_t { kRegion, kModule, kCall };

struct Item {
  uint32_t event = 0;
  ItemKind kind = ItemKind::kCall;
  int64_t flops = 0;
  bool compute = false;
};

// An enclosing item still open on the thread: the innermost module around it and whether some
// non-forward region encloses it.
struct Open {
  uint32_t event = 0;
  int64_t module = -1;
  bool excluded = false;
};

}  // namespace

std::string module_class(std::string_view name) {
  const size_t u = name.rfind('_');
  if (u == std::string_view::npos || u + 1 == name.size()) return std::string(name);
  for (size_t i = u + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::string(name);
  }
  return std::string(name.substr(0, u));
}

ModuleFlops module_flops(const trace::RankTrace& t) {
  ModuleFlops out;
  const trace::EventTable& e = t.events;
  const std::vector<ProfilerStepWindow> steps = find_profiler_steps(t).steps;  // by start, disjoint
  out.steps = static_cast<int64_t>(steps.size());
  auto in_window = [&](int64_t ts) {
    if (steps.empty()) return true;
    auto s = std::upper_bound(steps.begin(), steps.end(), ts,
                              [](int64_t v, const ProfilerStepWindow& w) { return v < w.start_ns; });
    return s != steps.begin() && ts < std::prev(s)->end_ns;
  };

  std::vector<Item> items;
  HostRoles roles(t.strings);
  std::map<trace::StringId, bool> module_names;  // by name id: whether it is "nn.Module: ..."
  for (uint32_t i = 0; i < e.size(); ++i) {
    if (e.phase[i] != trace::Phase::kComplete) continue;
    const trace::Category c = e.cat[i];
    if (c == trace::Category::kPythonFunction) {
      auto [it, fresh] = module_names.try_emplace(e.name[i], false);
      if (fresh) it->second = t.strings.view(e.name[i]).starts_with(kModulePrefix);
      if (it->second) items.push_back({i, ItemKind::kModule});
    } else if (trace::is_cpu_op_category(c)) {
      const HostRole role = roles.of(e.name[i], c);
      if (role == HostRole::kBackward || role == HostRole::kOptimizer || role == HostRole::kDataLoading) {
        items.push_back({i, ItemKind::kRegion});
      }
    }
  }
  for (const CountedFlopCall& call : counted_flop_calls(t)) {
    items.push_back({call.event, ItemKind::kCall, call.flops, is_flop_counter_class(call.cls)});
  }
  std::sort(items.begin(), items.end(), [&](const Item& a, const Item& b) {
    if (e.track[a.event] != e.track[b.event]) return e.track[a.event] < e.track[b.event];
    if (e.ts[a.event] != e.ts[b.event]) return e.ts[a.event] < e.ts[b.event];
    if (e.end(a.event) != e.end(b.event)) return e.end(a.event) > e.end(b.event);
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.event < b.event;
  });

  std::map<std::pair<int64_t, trace::StringId>, int64_t> node_of;  // (parent node, name) -> node
  std::vector<int64_t> own_flops;                                  // per node, its calls' FLOPs outside submodules
  std::vector<Open> open;
  for (size_t k = 0; k < items.size(); ++k) {
    const Item& it = items[k];
    const uint32_t ev = it.event;
    if (k > 0 && e.track[items[k - 1].event] != e.track[ev]) open.clear();
    while (!open.empty() && (e.ts[ev] >= e.end(open.back().event) || e.end(ev) > e.end(open.back().event))) {
      open.pop_back();
    }
    const int64_t module = open.empty() ? -1 : open.back().module;
    const bool excluded = !open.empty() && open.back().excluded;
    const bool inside = in_window(e.ts[ev]);
    switch (it.kind) {
      case ItemKind::kRegion:
        open.push_back({ev, module, true});
        break;
      case ItemKind::kModule: {
        auto [found, fresh] = node_of.try_emplace({module, e.name[ev]}, static_cast<int64_t>(out.modules.size()));
        if (fresh) {
          TraceModule m;
          m.name = std::string(t.strings.view(e.name[ev]).substr(kModulePrefix.size()));
          m.cls = module_class(m.name);
          m.parent = module;
          m.depth = module < 0 ? 0 : out.modules[static_cast<size_t>(module)].depth + 1;
          out.modules.push_back(std::move(m));
          own_flops.push_back(0);
        }
        TraceModule& m = out.modules[static_cast<size_t>(found->second)];
        if (inside) {
          ++m.calls;
          m.host_ns += e.dur[ev];  // one trace's durations: bounded by its span, no overflow
        }
        open.push_back({ev, found->second, excluded});
        break;
      }
      case ItemKind::kCall:
        if (!inside) break;
        add_or_unknown(&out.all_flops, it.flops);
        if (!excluded) {
          add_or_unknown(&out.forward_flops, it.flops);
          if (it.compute) add_or_unknown(&out.forward_compute_flops, it.flops);
        }
        if (module >= 0) add_or_unknown(&own_flops[static_cast<size_t>(module)], it.flops);
        break;
    }
  }
  // Submodules' FLOPs into their parents: children come after their parents.
  for (size_t i = out.modules.size(); i-- > 0;) {
    add_or_unknown(&out.modules[i].flops, own_flops[i]);
    if (out.modules[i].parent >= 0) {
      add_or_unknown(&own_flops[static_cast<size_t>(out.modules[i].parent)], out.modules[i].flops);
    }
  }
  return out;
}

}  // namespace scaleprof::analysis
