#include "analysis/step_decomposition.h"

#include <algorithm>
#include <bit>
#include <map>
#include <utility>

#include "analysis/deepspeed_frames.h"
#include "analysis/device_events.h"
#include "analysis/exposed_collectives.h"
#include "analysis/intervals.h"
#include "analysis/kernel_classify.h"
#include "analysis/phases.h"

namespace scaleprof::analysis {

namespace {

using trace::Category;

// The rank's activity over the whole trace, one merged set per kind.
struct Activity {
  std::vector<Interval> device_compute, device_optimizer, device_comm;
  std::vector<Interval> host_comm, data, optimizer, host_compute, host_any;
};

// A predicate on event names (fsdp_collective_label, deepspeed_collective_frame) by name id, each name
// decided once.
class NamesThat {
 public:
  NamesThat(const trace::StringPool& strings, bool (*predicate)(std::string_view))
      : strings_(strings), predicate_(predicate) {}
  bool of(uint32_t name) {
    if (name >= known_.size()) known_.resize(name + 1, 0);
    if (known_[name] == 0) known_[name] = predicate_(strings_.view(name)) ? 2 : 1;
    return known_[name] == 2;
  }

 private:
  const trace::StringPool& strings_;
  bool (*predicate_)(std::string_view);
  std::vector<uint8_t> known_;  // 0 unknown, 1 no, 2 yes
};

// One thread's host events that decide when it computes.
struct ThreadOps {
  std::vector<Interval> compute;    // cpu_ops other than collectives
  std::vector<Interval> comm;       // collective ops
  std::vector<Interval> ds_frames;  // DeepSpeed's collective frames (deepspeed_frames.h)
};

// When the thread computes: inside its operators, less the time it spends inside a collective op
// (c10d::allreduce_ waits inside AccumulateGrad) or inside DeepSpeed's collective frames with none of
// the operators they run (a ZeRO-3 backward fetch waits inside the autograd node that called
// DeepSpeed's hook; an operator inside the frame, the copy-in or copy-out, computes).
std::vector<Interval> thread_compute(ThreadOps ops) {
  std::vector<Interval> comm = union_intervals(std::move(ops.comm));
  if (!ops.ds_frames.empty()) {
    const std::vector<Interval> frames = union_intervals(std::move(ops.ds_frames));
    std::vector<Interval> inside;  // operators that start inside a frame (one enclosing it started before)
    for (const Interval& iv : ops.compute) {
      if (covers(frames, iv.start)) inside.push_back(iv);
    }
    inside = union_intervals(std::move(inside));
    const std::vector<Interval> inside_frames = subtract_intervals(inside, subtract_intervals(inside, frames));
    for (const Interval& iv : subtract_intervals(frames, inside_frames)) comm.push_back(iv);
    comm = union_intervals(std::move(comm));
  }
  return subtract_intervals(union_intervals(std::move(ops.compute)), comm);
}

Activity collect_activity(const trace::RankTrace& trace, bool* device) {
  const trace::EventTable& ev = trace.events;
  const size_t n = ev.size();
  Activity a;
  std::map<uint32_t, ThreadOps> thread_ops;
  HostRoles roles(trace.strings);
  NamesThat fsdp_labels(trace.strings, fsdp_collective_label);
  NamesThat ds_frames(trace.strings, deepspeed_collective_frame);
  for (size_t i = 0; i < n; ++i) {
    if (ev.phase[i] != trace::Phase::kComplete) continue;
    const Category c = ev.cat[i];
    const Interval iv{ev.ts[i], ev.end(i)};
    if (is_stream_work(c)) {
      *device = true;
      continue;
    }
    if (trace::is_runtime_category(c)) {
      a.host_any.push_back(iv);
      continue;
    }
    if (c == Category::kPythonFunction) {
      // DeepSpeed's own collective (with_stack=True): communication where no operator runs in it, as
      // FSDP's labels below.
      if (ds_frames.of(ev.name[i])) {
        a.host_comm.push_back(iv);
        thread_ops[ev.track[i]].ds_frames.push_back(iv);
      }
      continue;
    }
    if (!trace::is_cpu_op_category(c) || profiler_step_number(trace.name(i))) continue;
    a.host_any.push_back(iv);
    const HostRole role = roles.of(ev.name[i], c);
    if (role == HostRole::kDataLoading) a.data.push_back(iv);
    if (role == HostRole::kOptimizer) a.optimizer.push_back(iv);
    if (role == HostRole::kCommunication) {
      a.host_comm.push_back(iv);
      thread_ops[ev.track[i]].comm.push_back(iv);
    } else if (c == Category::kUserAnnotation && fsdp_labels.of(ev.name[i])) {
      // FSDP's own all-gather or reduce (exposed_collectives.h): communication where no operator runs
      // inside it (the copy-in operators stay compute), as `trace fsdp` counts it exposed.
      a.host_comm.push_back(iv);
    } else if (c == Category::kCpuOp) {
      thread_ops[ev.track[i]].compute.push_back(iv);
    }
  }
  a.data = union_intervals(std::move(a.data));
  a.optimizer = union_intervals(std::move(a.optimizer));
  a.host_comm = union_intervals(std::move(a.host_comm));
  a.host_any = union_intervals(std::move(a.host_any));
  if (*device) {
    // Device work by type; its launch tells optimizer work from the rest.
    const std::vector<int64_t> launches = launch_rows(trace);
    KernelNameTypes types(trace.strings);
    for (size_t i = 0; i < n; ++i) {
      if (ev.phase[i] != trace::Phase::kComplete || !is_stream_work(ev.cat[i])) continue;
      const Interval iv{ev.ts[i], ev.end(i)};
      KernelType type = classify_device_event(ev.cat[i], trace.name(i));
      if (ev.cat[i] == Category::kKernel) type = types.of(ev.name[i]);
      if (type == KernelType::kCommunication) {
        a.device_comm.push_back(iv);
      } else if (launches[i] >= 0 && covers(a.optimizer, ev.ts[static_cast<size_t>(launches[i])])) {
        a.device_optimizer.push_back(iv);
      } else {
        a.device_compute.push_back(iv);
      }
    }
    a.device_compute = union_intervals(std::move(a.device_compute));
    a.device_optimizer = union_intervals(std::move(a.device_optimizer));
    a.device_comm = union_intervals(std::move(a.device_comm));
  } else {
    // A thread inside a collective is waiting on it, whatever op encloses the collective.
    std::vector<Interval> compute;
    for (auto& [track, ops] : thread_ops) {
      for (const Interval& iv : thread_compute(std::move(ops))) compute.push_back(iv);
    }
    a.host_compute = union_intervals(std::move(compute));
  }
  return a;
}

}  // namespace

std::string_view step_part_name(StepPart part) {
  switch (part) {
    case StepPart::kCompute:
      return "compute";
    case StepPart::kExposedCommunication:
      return "exposed_communication";
    case StepPart::kCollectiveWait:
      return "collective_wait";
    case StepPart::kDataLoading:
      return "data_loading";
    case StepPart::kOptimizer:
      return "optimizer";
    case StepPart::kHostOverhead:
      return "host_overhead";
    case StepPart::kIdle:
      break;
  }
  return "idle";
}

RankDecomposition decompose_steps(const trace::RankTrace& trace, bool include_last_step,
                                  std::span<const int64_t> cuts) {
  RankDecomposition out;
  out.path = trace.path;
  const std::vector<ProfilerStepWindow> steps = analysed_steps(trace, include_last_step);
  const Activity a = collect_activity(trace, &out.device);
  if (steps.empty()) return out;

  // The sets in priority order, each with the part it counts in.
  std::vector<std::pair<const std::vector<Interval>*, StepPart>> order;
  std::vector<Interval> comm;
  if (out.device) {
    comm = union_intervals([&] {
      std::vector<Interval> both = a.device_comm;
      both.insert(both.end(), a.host_comm.begin(), a.host_comm.end());
      return both;
    }());
    order = {{&a.device_compute, StepPart::kCompute},  {&a.device_optimizer, StepPart::kOptimizer},
             {&comm, StepPart::kExposedCommunication}, {&a.data, StepPart::kDataLoading},
             {&a.optimizer, StepPart::kOptimizer},     {&a.host_any, StepPart::kHostOverhead}};
  } else {
    order = {{&a.data, StepPart::kDataLoading},
             {&a.optimizer, StepPart::kOptimizer},
             {&a.host_compute, StepPart::kCompute},
             {&a.host_comm, StepPart::kExposedCommunication},
             {&a.host_any, StepPart::kHostOverhead}};
  }
  out.steps.reserve(steps.size());
  for (const ProfilerStepWindow& w : steps) {
    StepDecomposition d;
    d.step = w.step;
    d.start_ns = w.start_ns;
    d.end_ns = w.end_ns;
    std::vector<std::vector<Interval>> sets;
    sets.reserve(order.size());
    for (const auto& [set, part] : order) sets.push_back(clip_intervals(*set, w.start_ns, w.end_ns));
    int64_t covered = 0;
    // The cuts inside the step, each taken when the sweep passes it: the parts so far, idle being the
    // time no set covered.
    auto cut = std::lower_bound(cuts.begin(), cuts.end(), w.start_ns);
    auto take_cut = [&] {
      StepCut c{*cut, out.steps.size(), d.part_ns};
      c.part_ns[static_cast<size_t>(StepPart::kIdle)] = *cut - w.start_ns - covered;
      out.cuts.push_back(c);
      ++cut;
    };
    sweep_coverage(sets, [&](uint32_t mask, int64_t start, int64_t end) {
      int64_t& part = d.part_ns[static_cast<size_t>(order[static_cast<size_t>(std::countr_zero(mask))].second)];
      for (; cut != cuts.end() && *cut < end; take_cut()) {  // cuts before or inside this segment
        if (*cut <= start) continue;
        part += *cut - start;
        covered += *cut - start;
        start = *cut;
      }
      part += end - start;
      covered += end - start;
    });
    while (cut != cuts.end() && *cut < w.end_ns) take_cut();
    d.part_ns[static_cast<size_t>(StepPart::kIdle)] = w.duration_ns() - covered;
    out.steps.push_back(d);
  }
  return out;
}

int64_t move_collective_wait(StepDecomposition* step, int64_t wait_ns) {
  int64_t& exposed = step->part_ns[static_cast<size_t>(StepPart::kExposedCommunication)];
  const int64_t moved = std::clamp<int64_t>(wait_ns, 0, exposed);
  exposed -= moved;
  step->part_ns[static_cast<size_t>(StepPart::kCollectiveWait)] += moved;
  return moved;
}

}  // namespace scaleprof::analysis
