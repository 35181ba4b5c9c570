#include "analysis/deepspeed_compare.h"

#include <map>
#include <utility>

#include "core/checked_sum.h"

namespace scaleprof::analysis {

bool is_forwardless_container(std::string_view cls) {
  return cls == "ModuleList" || cls == "ModuleDict" || cls == "ParameterList" || cls == "ParameterDict";
}

namespace {

struct Pairing {
  const trace::DsProfile& ds;
  const ModuleFlops& trace;
  std::vector<std::vector<size_t>> ds_children;      // per DeepSpeed module, in file order
  std::vector<std::vector<int64_t>> trace_children;  // per trace module, called ones, first-call order
  std::vector<std::vector<int64_t>> paired;          // per DeepSpeed module, its trace modules
  DsComparison* out;

  // The children of `d` a trace parent's children are paired with: containers replaced by theirs.
  void flat_children(size_t d, std::vector<size_t>* flat) const {
    for (size_t c : ds_children[d]) {
      if (is_forwardless_container(ds.modules[c].cls)) {
        flat_children(c, flat);
      } else {
        flat->push_back(c);
      }
    }
  }

  void pair_below(size_t d) {
    std::vector<size_t> flat;
    flat_children(d, &flat);
    if (flat.empty()) return;
    // DeepSpeed's children of each class, as many modules as each stands for.
    std::map<std::string_view, int64_t> ds_count;
    for (size_t c : flat) ds_count[ds.modules[c].cls] += ds.modules[c].repeat;  // <= 1e9 each, <= 2^25 lines
    for (int64_t t : paired[d]) {
      std::map<std::string_view, std::vector<int64_t>> by_class;
      for (int64_t child : trace_children[static_cast<size_t>(t)]) {
        by_class[trace.modules[static_cast<size_t>(child)].cls].push_back(child);
      }
      std::map<std::string_view, size_t> next;
      for (size_t c : flat) {
        const trace::DsModule& m = ds.modules[c];
        const std::vector<int64_t>& pool = by_class[m.cls];
        size_t& at = next[m.cls];
        out->modules[c].expected += m.repeat;
        if (ds_count[m.cls] > 1 || pool.size() > 1) out->modules[c].by_order = true;
        for (int64_t k = 0; k < m.repeat && at < pool.size(); ++k) paired[c].push_back(pool[at++]);
      }
    }
    for (size_t c : flat) pair_below(c);
  }
};

}  // namespace

DsComparison compare_with_deepspeed(const trace::DsProfile& ds, const ModuleFlops& trace) {
  DsComparison out;
  out.modules.resize(ds.modules.size());
  Pairing p{ds, trace, {}, {}, {}, &out};
  p.ds_children.resize(ds.modules.size());
  p.paired.resize(ds.modules.size());
  for (size_t i = 0; i < ds.modules.size(); ++i) {
    if (ds.modules[i].parent >= 0) p.ds_children[static_cast<size_t>(ds.modules[i].parent)].push_back(i);
    out.modules[i].container = is_forwardless_container(ds.modules[i].cls);
  }
  p.trace_children.resize(trace.modules.size());
  for (size_t i = 0; i < trace.modules.size(); ++i) {
    const TraceModule& m = trace.modules[i];
    if (m.parent >= 0 && m.calls > 0)
      p.trace_children[static_cast<size_t>(m.parent)].push_back(static_cast<int64_t>(i));
  }
  // The root: the trace module of DeepSpeed's root class nearest the top, the most called among equals.
  if (!ds.modules.empty()) {
    for (size_t i = 0; i < trace.modules.size(); ++i) {
      const TraceModule& m = trace.modules[i];
      if (m.calls == 0 || m.cls != ds.modules[0].cls) continue;
      if (out.root >= 0) {
        const TraceModule& best = trace.modules[static_cast<size_t>(out.root)];
        if (m.depth > best.depth || (m.depth == best.depth && m.calls <= best.calls)) continue;
      }
      out.root = static_cast<int64_t>(i);
    }
  }
  if (out.root >= 0) {
    const TraceModule& r = trace.modules[static_cast<size_t>(out.root)];
    out.forwards = r.calls;
    out.forwards_counted = true;
    out.trace_flops = r.flops;
    out.trace_host_ns = r.host_ns;
    out.modules[0].expected = 1;
    p.paired[0].push_back(out.root);
    p.pair_below(0);
  } else {
    out.forwards = trace.steps > 0 ? trace.steps : 1;
    out.trace_flops = trace.forward_flops;
  }
  for (size_t i = 0; i < ds.modules.size(); ++i) {
    DsModuleMatch& row = out.modules[i];
    for (int64_t t : p.paired[i]) {
      const TraceModule& m = trace.modules[static_cast<size_t>(t)];
      if (row.trace_name.empty()) row.trace_name = m.name;
      ++row.instances;
      row.calls += m.calls;  // one trace's calls and durations: bounded
      row.host_ns += m.host_ns;
      add_or_unknown(&row.flops, m.flops);
    }
  }
  // A container's figures are its children's (children come after their parent in the file).
  for (size_t i = ds.modules.size(); i-- > 0;) {
    if (!out.modules[i].container) continue;
    DsModuleMatch& row = out.modules[i];
    for (size_t c : p.ds_children[i]) {
      const DsModuleMatch& child = out.modules[c];
      row.instances += child.instances;
      row.expected += child.expected;
      row.host_ns += child.host_ns;
      add_or_unknown(&row.flops, child.flops);
      row.by_order |= child.by_order;
      if (row.trace_name.empty()) row.trace_name = child.trace_name;
    }
  }
  return out;
}

}  // namespace scaleprof::analysis
