#include "engine/run_trace_metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "analysis/all_to_all_cost.h"
#include "analysis/analysis_window.h"
#include "analysis/collective_calls.h"
#include "analysis/collective_match.h"
#include "analysis/collective_rows.h"
#include "analysis/computation_fraction.h"
#include "analysis/device_peaks.h"
#include "analysis/exposed_collectives.h"
#include "analysis/flops.h"
#include "analysis/kernel_breakdown.h"
#include "analysis/memory_timeline.h"
#include "analysis/operator_table.h"
#include "analysis/phases.h"
#include "analysis/pipeline_bubbles.h"
#include "analysis/profiler_steps.h"
#include "analysis/step_decomposition.h"
#include "analysis/stragglers.h"
#include "analysis/temporal_breakdown.h"
#include "core/checked_sum.h"
#include "engine/rank_stream.h"
#include "engine/step_timeline_build.h"
#include "trace/trace_set.h"

namespace scaleprof::engine {

namespace {

// Communication vs. waiting for stragglers, from the collectives matched across the run's ranks:
// only calls launched inside a ProfilerStep count, so that the sums are parts of the step time.
// Sums across ranks are checked (core/checked_sum.h): false when one would pass int64, and then
// nothing is added (the figures are left out, never wrapped).
bool add_collective_metrics(const analysis::CollectiveRows& compact, const analysis::CollectiveAnalysis& matched,
                            tables::RunData* run, tables::TraceSums* sums) {
  tables::TraceSums s = *sums;
  bool exact = true;
  for (const analysis::CompactRank& r : compact.ranks()) {
    for (const analysis::StepRow& st : compact.steps(r))
      exact = add_checked(&s.step_ns, st.end_ns - st.start_ns) && exact;
  }
  std::vector<tables::CollectiveSample> samples;
  for (const analysis::MatchedCollective& m : matched.calls) {
    if (m.step < 0) continue;
    ++s.collective_calls;
    if (m.status != analysis::MatchStatus::kMatched) continue;
    ++s.collectives_matched;
    for (const analysis::RankTiming& t : m.ranks) {
      exact = add_checked(&s.collective_latency_ns, m.latency_ns) && exact;
      exact = add_checked(&s.collective_wait_ns, t.wait_ns) && exact;
    }
    samples.push_back({m.type, m.bytes, m.busbw_gbps});
  }
  std::vector<tables::RankWait> waits;
  if (s.collectives_matched > 0) {
    for (const analysis::RankStraggling& r : analysis::find_stragglers(compact, matched).ranks) {
      exact = exact && r.own_wait_exact && r.wait_imposed_exact;
      waits.push_back({r.rank, r.calls, r.own_wait_ns, r.wait_imposed_ns, r.arrived_last});
    }
  }
  if (!exact) return false;
  *sums = s;
  run->collectives.insert(run->collectives.end(), samples.begin(), samples.end());
  run->rank_waits.insert(run->rank_waits.end(), waits.begin(), waits.end());
  return true;
}

// What the trace stage keeps of one rank once its trace is freed: its GPU time split and the sums the
// computation fraction pooled over ranks needs (its collective calls go to the compact rows).
struct RankParts {
  int64_t rank = 0;
  tables::TraceSums sums;
  analysis::FractionParts fraction;
  analysis::RankDecomposition decomposition;    // its profiled steps split into exclusive parts
  std::vector<tables::OperatorTime> operators;  // most self time first, over its profiled steps
  int64_t peak_device_memory_bytes = -1;        // largest peak allocated on a non-CPU device; -1 none
  // FLOPs of its ProfilerSteps (issue 23): counted FLOPs (NaN: no shapes), the steps' time, and the
  // time the matmul/convolution/attention FLOPs would take at the device's peak (NaN: no peak).
  double step_flops = std::numeric_limits<double>::quiet_NaN();
  double flop_step_ns = 0;
  double flop_ideal_ns = std::numeric_limits<double>::quiet_NaN();
  std::vector<analysis::Intervals> what_if_targets;  // when each named target ran (TraceStageOptions)
  analysis::RankPipeline pipeline;                   // its P2P waits per step (pipeline_bubbles.h)
  // Its exposed all-gathers and reduce-scatters (FSDP, ZeRO) per type, phase, FSDP layer and process
  // group over its analysed steps (exposed_collectives.h), most exposed first: communication's parts; and
  // each call of them by the end of its collective (the rank's clock), to take matched waits out.
  std::vector<tables::CommunicationPart> fsdp_parts;
  struct FsdpCall {
    int64_t end_ns = 0;
    int64_t exposed_ns = 0;
    size_t part = 0;  // into fsdp_parts
  };
  std::vector<FsdpCall> fsdp_calls;  // by end
};

// The FLOPs of a rank's profiled steps and their time at the device's peaks (analysis/flops.h,
// analysis/device_peaks.h), for the report's FLOPs and MFU against workers.
void add_step_flops(const trace::RankTrace& rank, RankParts* out) {
  if (rank.shapes.size() == 0) return;
  const analysis::RankFlops f = analysis::compute_flops(rank);
  double flops = 0;
  double ns = 0;
  analysis::DtypeFlops compute{};
  for (const analysis::FlopStep& s : f.steps) {
    // FLOPs past int64 (core/checked_sum.h: unknown) are left out as unknown (NaN), never wrapped.
    if (is_unknown_figure(s.flops)) return;
    flops += static_cast<double>(s.flops);
    ns += static_cast<double>(s.duration_ns());
    for (size_t d = 0; d < compute.size(); ++d) add_or_unknown(&compute[d], s.compute_flops[d]);
  }
  if (ns <= 0 || flops <= 0) return;  // no counted call (shapes of other ops only): nothing to report
  out->step_flops = flops;
  out->flop_step_ns = ns;
  const analysis::DevicePeak* peak =
      rank.metadata.devices.empty() ? nullptr : analysis::find_device_peak(rank.metadata.devices[0].name);
  if (peak == nullptr) return;
  double ideal = 0;
  for (size_t d = 0; d < compute.size(); ++d) {
    if (compute[d] == 0) continue;
    if (!(peak->tflops[d] > 0) || is_unknown_figure(compute[d])) return;  // no peak, or past int64: MFU unknown
    ideal += static_cast<double>(compute[d]) / (peak->tflops[d] * 1e12) * 1e9;
  }
  out->flop_ideal_ns = ideal;
}

// The operators of one rank that the loss attribution names (computation per sample grew most):
// operators, not annotations, collectives or ProfilerSteps, by self time (device time where the trace has device
// work), the largest 64, scaled from the whole trace to the decomposed steps (the trace's last step
// is profiled but not decomposed: the ProfilerStep* row's total time covers every profiled step).
std::vector<tables::OperatorTime> step_operators(const analysis::OperatorTable& table, bool device,
                                                 int64_t decomposed_ns) {
  int64_t profiled_ns = 0;
  for (const analysis::OperatorRow& r : table.rows) {
    if (r.name == analysis::kAllProfilerStepsName) profiled_ns = r.cpu_total_ns;
  }
  std::vector<tables::OperatorTime> out;
  if (profiled_ns <= 0 || decomposed_ns <= 0) return out;
  const double scale = static_cast<double>(decomposed_ns) / static_cast<double>(profiled_ns);
  for (const analysis::OperatorRow& r : table.rows) {
    const int64_t self = device ? r.self_device_ns : r.self_cpu_ns;
    // Collectives are communication, not computation, in the decomposition.
    const bool collective = r.name.starts_with("c10d::") || analysis::is_backend_collective_name(r.name);
    if (r.user_annotation || collective || r.name == analysis::kAllProfilerStepsName || self <= 0) continue;
    out.push_back({r.name, static_cast<int64_t>(static_cast<double>(self) * scale)});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.self_ns > b.self_ns; });
  if (out.size() > 64) out.resize(64);
  return out;
}

// The run's profiled steps split into exclusive parts (analysis/step_decomposition.h), seen from one
// rank: each rank's wait at the matched collectives of a step is moved from its exposed communication
// (as `trace decompose` does), and the rank that waited longest in all is kept (the lowest rank on a
// tie or when none waited). Every rank's step lasts about as long in synchronous training; the rank
// that waited shows the stragglers' cost as waiting, where the straggler's own view would show it as
// its slower work, and one rank's parts stay exclusive slices of wall time (a mean over ranks would
// split a straggler's cost between waiting and whatever the straggler did).
const RankParts* add_step_decomposition(std::vector<RankParts>* parts, const analysis::CollectiveAnalysis& matched,
                                        tables::RunData* run, tables::TraceSums* sums) {
  std::map<std::pair<int64_t, int64_t>, int64_t> waits;  // (rank, step) -> summed wait
  for (const analysis::MatchedCollective& call : matched.calls) {
    if (call.status != analysis::MatchStatus::kMatched || call.step < 0) continue;
    for (const analysis::RankTiming& t : call.ranks) waits[{t.rank, call.step}] += t.wait_ns;
  }
  const RankParts* view = nullptr;
  std::array<int64_t, analysis::kStepPartCount> view_parts{};
  int64_t view_steps = 0;
  for (RankParts& p : *parts) {
    std::array<int64_t, analysis::kStepPartCount> sum{};
    int64_t steps = 0;
    bool exact = true;
    for (analysis::StepDecomposition& st : p.decomposition.steps) {
      if (auto it = waits.find({p.rank, st.step}); it != waits.end()) analysis::move_collective_wait(&st, it->second);
      exact = add_checked(&steps, st.duration_ns()) && exact;
      for (size_t k = 0; k < sum.size(); ++k) exact = add_checked(&sum[k], st.part_ns[k]) && exact;
    }
    if (!exact || steps <= 0) continue;
    const size_t wait = static_cast<size_t>(analysis::StepPart::kCollectiveWait);
    if (view == nullptr || sum[wait] > view_parts[wait]) {
      view = &p;
      view_parts = sum;
      view_steps = steps;
    }
  }
  if (view == nullptr) return nullptr;
  auto part = [&](analysis::StepPart k) { return view_parts[static_cast<size_t>(k)]; };
  // The all-to-all imbalance inside the viewed rank's exposed communication: the cost of its matched
  // all-to-alls per step (all_to_all_cost.h), at most the step's exposed communication, so that it stays
  // a detail of communication and the parts still add up.
  std::map<int64_t, int64_t> imbalance;  // step -> cost
  for (const analysis::AlltoallCost& c : analysis::alltoall_costs(matched).calls) {
    const analysis::MatchedCollective& call = matched.calls[c.call];
    if (c.cost_ns <= 0 || call.status != analysis::MatchStatus::kMatched || call.step < 0) continue;
    const bool takes_part = std::any_of(call.ranks.begin(), call.ranks.end(),
                                        [&](const analysis::RankTiming& t) { return t.rank == view->rank; });
    if (takes_part) add_checked(&imbalance[call.step], c.cost_ns);
  }
  for (const analysis::StepDecomposition& st : view->decomposition.steps) {
    if (auto it = imbalance.find(st.step); it != imbalance.end()) {
      add_checked(&sums->step_alltoall_imbalance_ns,
                  std::min(it->second, st.part(analysis::StepPart::kExposedCommunication)));
    }
  }
  sums->decomposed_runs = 1;
  sums->decomposed_step_ns = view_steps;
  sums->step_compute_ns = part(analysis::StepPart::kCompute);
  sums->step_communication_ns = part(analysis::StepPart::kExposedCommunication);
  sums->step_wait_ns = part(analysis::StepPart::kCollectiveWait);
  sums->step_data_loading_ns = part(analysis::StepPart::kDataLoading);
  sums->step_optimizer_ns = part(analysis::StepPart::kOptimizer);
  sums->step_host_overhead_ns = part(analysis::StepPart::kHostOverhead);
  sums->step_idle_ns = part(analysis::StepPart::kIdle);
  run->operators = view->operators;
  return view;
}

// The pipeline bubble of the decomposed rank (analysis/pipeline_bubbles.h): where the run's ranks form a
// pipeline that rank is a stage of, its wait for its neighbours in each decomposed step (on GPU traces the
// device basis: the step's time without device computation, which NCCL's spinning SendRecv kernels fill),
// at most that step's exposed communication (the wait is communication the decomposition already counts:
// the bubble is named out of it, never added beside it; device time without computation that the
// decomposition puts in host overhead or idle stays there), and the schedule's ideal
// (p-1)/(m+p-1) of the same steps.
void add_pipeline_bubble(std::vector<RankParts>* parts, const RankParts& view, tables::RunData* run,
                         tables::TraceSums* sums) {
  std::vector<analysis::RankPipeline> ranks;
  int64_t view_rank = view.rank;
  const analysis::RankDecomposition& decomposition = view.decomposition;
  for (RankParts& p : *parts) {
    if (!p.pipeline.peers.empty()) ranks.push_back(std::move(p.pipeline));
  }
  if (ranks.size() < 2) return;
  const analysis::PipelineAnalysis pipelines = analysis::analyse_pipeline(ranks);
  const analysis::Pipeline* mine = nullptr;
  for (const analysis::Pipeline& p : pipelines.pipelines) {
    if (std::find(p.ranks.begin(), p.ranks.end(), view_rank) != p.ranks.end()) mine = &p;
  }
  if (mine == nullptr || mine->ranks.size() < 2) return;
  std::map<int64_t, int64_t> bubble;  // step -> the view's bubble
  for (const analysis::PipelineStageStep& r : pipelines.rows) {
    if (r.pipeline == mine->index && r.rank == view_rank) bubble[r.step] = r.bubble_ns;
  }
  int64_t steps = 0;
  for (const analysis::StepDecomposition& st : decomposition.steps) {
    add_checked(&steps, st.duration_ns());
    if (auto it = bubble.find(st.step); it != bubble.end()) {
      add_checked(&sums->step_pipeline_bubble_ns,
                  std::min(it->second, st.part(analysis::StepPart::kExposedCommunication)));
    }
  }
  if (mine->micro_batches > 0 && std::isfinite(mine->ideal_fraction)) {
    sums->step_pipeline_ideal_ns = std::llround(mine->ideal_fraction * static_cast<double>(steps));
  }
  run->pipeline_stages = static_cast<int64_t>(mine->ranks.size());
  run->pipeline_micro_batches = mine->micro_batches;
}

// FSDP/ZeRO's exposed all-gathers and reduce-scatters of one rank as named parts of its communication
// (tables::CommunicationPart): per type, phase, FSDP layer (where FSDP names one) and process group, the
// sixteen most exposed and the rest in one part; and their calls, each with its part. Group ranks are left
// out of the name: the same group holds other ranks at another scale, and a part is compared between
// scales by its name.
void add_fsdp_parts(const analysis::RankExposedCollectives& exposed, RankParts* out) {
  constexpr size_t kNone = static_cast<size_t>(-1);
  constexpr size_t kNamed = 16;
  std::vector<size_t> part_of(exposed.layers.size(), kNone);
  size_t rest = kNone;
  size_t named = 0;
  for (size_t i = 0; i < exposed.layers.size(); ++i) {  // most exposed first
    const analysis::ExposedRow& r = exposed.layers[i];
    if ((r.type != "allgather" && r.type != "reduce_scatter") || r.exposed_ns <= 0 || is_unknown_figure(r.exposed_ns))
      continue;
    if (named == kNamed) {
      if (rest == kNone) {
        rest = out->fsdp_parts.size();
        out->fsdp_parts.push_back({"other all-gathers and reduce-scatters", 0});
      }
      add_checked(&out->fsdp_parts[rest].ns, r.exposed_ns);
      part_of[i] = rest;
      continue;
    }
    std::string name = fmt::format("{} in {}", r.type, analysis::step_phase_name(r.phase));
    if (!r.layer.empty()) name += ", " + r.layer;
    if (!r.group.empty()) name += fmt::format(" (group {})", r.group);
    part_of[i] = out->fsdp_parts.size();
    out->fsdp_parts.push_back({std::move(name), r.exposed_ns});
    ++named;
  }
  for (const analysis::ExposedCallEnd& c : exposed.call_ends) {  // by end
    if (c.layer < part_of.size() && part_of[c.layer] != kNone && c.exposed_ns > 0)
      out->fsdp_calls.push_back({c.end_ns, c.exposed_ns, part_of[c.layer]});
  }
}

// The decomposed rank's FSDP parts, as parts of its exposed communication. The decomposition moves the
// rank's waits at matched collectives (for the last rank to arrive) out of communication into waiting for
// stragglers, and FSDP's exposed time holds them: each matched call's wait is taken out of that call's part
// (the call found by the end of its collective on the rank's clock). Where what is left still passes the
// decomposition's exposed communication (the rules differ: FSDP's counts the issuing thread's operators as
// hiding a call, the decomposition any thread's computation), every part is scaled down by the same
// factor, so that the parts stay inside communication.
void add_communication_parts(const RankParts& view, const analysis::CollectiveAnalysis& matched,
                             const tables::TraceSums& sums, tables::RunData* run) {
  if (view.fsdp_parts.empty()) return;
  std::vector<tables::CommunicationPart> parts = view.fsdp_parts;
  int64_t offset = 0;  // aligned time = the rank's clock - offset (collective_match.h)
  for (const analysis::HostClock& h : matched.clocks) {
    if (std::find(h.ranks.begin(), h.ranks.end(), view.rank) != h.ranks.end()) offset = h.offset_ns;
  }
  std::vector<int64_t> left(view.fsdp_calls.size());
  for (size_t i = 0; i < left.size(); ++i) left[i] = view.fsdp_calls[i].exposed_ns;
  for (const analysis::MatchedCollective& call : matched.calls) {
    if (call.status != analysis::MatchStatus::kMatched || call.step < 0) continue;
    for (const analysis::RankTiming& t : call.ranks) {
      if (t.rank != view.rank || t.wait_ns <= 0) continue;
      const int64_t end = t.end_ns + offset;
      auto it = std::lower_bound(view.fsdp_calls.begin(), view.fsdp_calls.end(), end,
                                 [](const RankParts::FsdpCall& c, int64_t e) { return c.end_ns < e; });
      if (it == view.fsdp_calls.end() || it->end_ns != end) continue;
      const auto k = static_cast<size_t>(it - view.fsdp_calls.begin());
      const int64_t moved = std::min(t.wait_ns, left[k]);
      left[k] -= moved;
      parts[it->part].ns -= moved;
    }
  }
  double total = 0;
  for (const tables::CommunicationPart& p : parts) total += static_cast<double>(std::max<int64_t>(p.ns, 0));
  if (total <= 0) return;
  const double room =
      static_cast<double>(sums.step_communication_ns - sums.step_pipeline_bubble_ns - sums.step_alltoall_imbalance_ns);
  const double scale = total > room ? std::max(0.0, room) / total : 1.0;

  for (const tables::CommunicationPart& p : parts) {
    const int64_t ns = std::llround(static_cast<double>(std::max<int64_t>(p.ns, 0)) * scale);
    if (ns > 0) run->communication_parts.push_back({p.name, ns});
  }
}

// Per profiled step, the rank the others waited for most at the step's matched collectives (the last to
// arrive: the others' waits summed over the calls it arrived at last), on its ProfilerStep's span
// (tables/rank_activity.h): the straggler-causes join (analysis/straggler_causes.h) reads it where
// synchronous training leaves every rank's step time equal.
std::vector<tables::WaitedForStep> waited_for_steps(const analysis::CollectiveRows& rows,
                                                    const analysis::CollectiveAnalysis& matched) {
  std::map<int64_t, std::map<int64_t, int64_t>> imposed;  // step -> last rank -> waits it imposed
  for (const analysis::MatchedCollective& call : matched.calls) {
    if (call.status != analysis::MatchStatus::kMatched || call.step < 0 || call.last_rank < 0) continue;
    int64_t wait = 0;
    for (const analysis::RankTiming& t : call.ranks) add_checked(&wait, t.wait_ns);
    add_checked(&imposed[call.step][call.last_rank], wait);
  }
  std::vector<tables::WaitedForStep> out;
  for (const auto& [step, by_rank] : imposed) {
    auto most = std::max_element(by_rank.begin(), by_rank.end(),
                                 [](const auto& a, const auto& b) { return a.second < b.second; });
    if (most->second <= 0) continue;
    for (const analysis::CompactRank& r : rows.ranks()) {
      if (r.rank != most->first) continue;
      for (const analysis::StepRow& s : rows.steps(r)) {
        if (s.step == step) out.push_back({r.rank, s.start_ns, s.end_ns, most->second});
      }
    }
  }
  return out;
}

// Reduces one rank (on the thread that read it), inside its analysis window.
// `cuts`: the starts of its collective calls, where the what-if model's timeline splits its steps.
RankParts reduce_rank(const trace::RankTrace& rank, bool fraction, std::span<const int64_t> cuts) {
  const analysis::AnalysisWindow window = analysis::compute_analysis_window(rank);
  const analysis::TemporalBreakdown t = analysis::temporal_breakdown(rank, window.rows);
  const analysis::KernelBreakdown k = analysis::kernel_breakdown(rank, window.rows);
  int64_t comm = 0;
  int64_t memory = 0;
  for (const analysis::TypeShare& s : k.partition) {
    if ((s.types & analysis::kCommunicationBit) != 0 && (s.types & analysis::kComputationBit) == 0) comm += s.ns;
    if (s.types == analysis::kMemoryBit) memory += s.ns;
  }
  // One rank's parts are within the reader's bounds; their sum over ranks is checked.
  RankParts out;
  out.rank = rank.rank;
  tables::TraceSums& one = out.sums;
  one.ranks = 1;
  one.span_ns = t.kernel_time_ns;
  one.idle_ns = t.idle_ns;
  one.computation_ns = t.compute_ns;
  one.communication_ns = comm;
  one.memory_ns = memory;
  one.other_ns = t.kernel_time_ns - t.idle_ns - t.compute_ns - comm - memory;
  out.decomposition = analysis::decompose_steps(rank, false, cuts);
  int64_t decomposed_ns = 0;
  for (const analysis::StepDecomposition& st : out.decomposition.steps) decomposed_ns += st.duration_ns();
  const analysis::OperatorTable operators = analysis::compute_operator_table(rank);
  if (fraction) out.fraction = analysis::fraction_parts(operators);
  out.operators = step_operators(operators, out.decomposition.device, decomposed_ns);
  // Peak device memory (issue 23): only the peak is kept, so no step windows and no timeline.
  if (rank.memory.size() > 0) {
    analysis::MemoryOptions memory_options;
    memory_options.points = 0;
    memory_options.holders = false;
    for (const analysis::DeviceMemory& d : analysis::memory_timeline(rank, {}, memory_options).devices) {
      if (d.device_type != 0) out.peak_device_memory_bytes = std::max(out.peak_device_memory_bytes, d.peak_allocated);
    }
  }
  add_step_flops(rank, &out);
  out.pipeline = analysis::rank_pipeline(rank);
  out.pipeline.steps.shrink_to_fit();
  analysis::ExposedOptions exposed;
  exposed.keep_calls = true;
  exposed.any_thread_hides = true;  // the decomposition's rule: its parts stay inside its communication
  add_fsdp_parts(analysis::exposed_collectives(rank, false, 0, exposed), &out);
  return out;
}

}  // namespace

// Each run's traces go through the engine's per-rank driver (engine/rank_stream.h): a reading thread
// reads one rank, reduces it to RankParts and its compact collective rows, and frees it before reading
// the next, so memory is (threads x one trace) plus those, whatever the number of ranks (docs/scale.md).
// Sums over ranks are made in rank order once every file is read, as over a set loaded whole.
void add_trace_metrics(tables::ScalabilityData* data, const TraceStageOptions& options) {
  for (tables::RunData& run : data->runs) {
    if (run.trace_files.empty()) continue;
    trace::LoadOptions load;
    load.threads = options.threads;
    load.parse.lenient = true;
    const bool want_fraction = !run.computation;
    auto reduce = [&](const trace::RankTrace& rank, unsigned /*threads_per_file*/) {
      engine::RankReduction<RankParts> out;
      out.collectives = analysis::extract_collectives(rank);
      out.parts = reduce_rank(rank, want_fraction, collective_cuts(*out.collectives));
      out.parts->what_if_targets = analysis::named_intervals(rank, options.what_if_targets);
      return out;
    };
    auto every_rank = [](int64_t) { return true; };
    std::vector<RankParts> parts;  // in rank order once reduced
    auto streamed = engine::reduce_ranks(run.trace_files, load, reduce, every_rank, &parts);
    if (!streamed) {
      data->errors.push_back(
          diagnostic(Severity::kError, fmt::format("{}: traces not used: {}", run.path, streamed.error().message)));
      continue;
    }
    const engine::ReducedRanks& reduced = streamed.value();
    for (const Diagnostic& e : reduced.set.errors) data->errors.push_back(e);
    if (parts.empty()) continue;
    const analysis::CollectiveRows& rows = reduced.rows;

    tables::TraceSums sums;
    bool exact = true;
    for (const RankParts& p : parts) exact = tables::add_checked(&sums, p.sums) && exact;
    if (!exact) {
      data->errors.push_back(diagnostic(
          Severity::kError,
          fmt::format("{}: traces not used: the {} ranks' times summed exceed 292 years of nanoseconds (int64)",
                      run.path, parts.size())));
      continue;
    }
    const analysis::CollectiveAnalysis matched = analysis::match_collectives(rows);
    {
      // The what-if model's input, before the waits are moved out of each rank's exposed communication.
      std::vector<RankSteps> steps;
      steps.reserve(parts.size());
      for (const RankParts& p : parts) steps.push_back({p.rank, &p.decomposition, &p.what_if_targets});
      run.timeline = build_step_timeline(steps, matched, options.what_if_targets);
    }
    if (const RankParts* view = add_step_decomposition(&parts, matched, &run, &sums)) {
      add_pipeline_bubble(&parts, *view, &run, &sums);
      add_communication_parts(*view, matched, sums, &run);
    }
    run.waited_for = waited_for_steps(rows, matched);
    if (!add_collective_metrics(rows, matched, &run, &sums)) {
      data->errors.push_back(diagnostic(
          Severity::kError,
          fmt::format(
              "{}: collectives across ranks left out: their times summed over ranks pass int64 nanoseconds (292 years)",
              run.path)));
    }
    run.traces = sums;
    for (const RankParts& p : parts) {
      if (p.peak_device_memory_bytes < 0) continue;
      run.peak_device_memory_bytes = std::max(run.peak_device_memory_bytes, p.peak_device_memory_bytes);
      run.min_peak_device_memory_bytes = run.min_peak_device_memory_bytes < 0
                                             ? p.peak_device_memory_bytes
                                             : std::min(run.min_peak_device_memory_bytes, p.peak_device_memory_bytes);
    }
    for (const RankParts& p : parts) {
      if (std::isnan(p.step_flops)) continue;
      run.step_flops = (std::isnan(run.step_flops) ? 0.0 : run.step_flops) + p.step_flops;
      run.flop_step_ns += p.flop_step_ns;
      run.flop_ideal_ns += p.flop_ideal_ns;  // NaN once any rank's device or dtype has no peak
    }
    if (want_fraction) {
      std::vector<analysis::FractionParts> fractions;
      fractions.reserve(parts.size());
      for (const RankParts& p : parts) fractions.push_back(p.fraction);
      const analysis::ComputationFraction f = analysis::pooled_fraction(fractions);
      if (f.exact) {
        tables::ComputationSums c;
        static_cast<tables::SelfTimeSums&>(c) = f;  // the sums, whatever fields they have
        c.basis = f.basis;
        c.ranks = static_cast<int64_t>(parts.size());
        run.computation = c;
      } else {
        data->errors.push_back(diagnostic(
            Severity::kError,
            fmt::format(
                "{}: computation fraction not used: the {} ranks' self times summed exceed 292 years of nanoseconds",
                run.path, parts.size())));
      }
    }
    if (parts.size() < static_cast<size_t>(run.workers)) {
      data->warnings.push_back(
          diagnostic(Severity::kWarning, fmt::format("{}: traces of {} of {} ranks; fractions are over those ranks",
                                                     run.path, parts.size(), run.workers)));
    }
  }
}

}  // namespace scaleprof::engine
