#include "analysis/collective_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

#include "analysis/all_to_all_cost.h"
#include "analysis/intervals.h"
#include "analysis/kernel_classify.h"
#include "analysis/profiler_steps.h"
#include "core/checked_sum.h"

namespace scaleprof::analysis {

namespace {

std::string lower_without_underscores(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (c != '_' && c != ' ') out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

// The integers of a JSON-ish list such as "[0, 1, 2]"; nullopt when anything else is in it.
std::optional<std::vector<int64_t>> parse_int_list(std::string_view text) {
  std::vector<int64_t> out;
  size_t i = 0;
  while (i < text.size() && text[i] == ' ') ++i;
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  ++i;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ' || c == ',') {
      ++i;
    } else if (c == ']') {
      return out;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const bool negative = c == '-';
      if (negative) ++i;
      int64_t v = 0;
      const size_t digits_from = i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - digits_from < 18)
        v = v * 10 + (text[i++] - '0');
      if (i == digits_from) return std::nullopt;
      out.push_back(negative ? -v : v);
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

// Element count of the first tensor in an `Input Dims` value: "[[1024]]" -> 1024, "[[4, 8], []]" -> 32.
std::optional<int64_t> first_tensor_elements(std::string_view dims) {
  size_t open = dims.find_first_not_of("[ ");
  if (open == std::string_view::npos || open == 0) return std::nullopt;
  size_t close = dims.find(']', open);
  if (close == std::string_view::npos) return std::nullopt;
  auto values = parse_int_list(dims.substr(open - 1, close - open + 2));
  if (!values || values->empty()) return std::nullopt;
  int64_t n = 1;
  for (int64_t v : *values) {
    if (v < 0 || (v > 0 && n > (int64_t{1} << 50) / v)) return std::nullopt;
    n *= v;
  }
  return n;
}

// The first string of an `Input type` value: "[\"float\", \"\"]" -> float.
std::string_view first_type(std::string_view types) {
  size_t q = types.find('"');
  if (q == std::string_view::npos) return {};
  size_t e = types.find('"', q + 1);
  if (e == std::string_view::npos) return {};
  return types.substr(q + 1, e - q - 1);
}

// "[0, 1, 2, 5]" -> "0-2,5"; "" when it is not a list of integers.
std::string normalise_ranks(std::string_view text) {
  auto ranks = parse_int_list(text);
  if (!ranks || std::any_of(ranks->begin(), ranks->end(), [](int64_t r) { return r < 0; })) return {};
  return format_rank_list(*ranks);
}

// Row of `event` in a sparse table whose `event` column is ascending (rows are appended in file
// order), or -1.
template <class Column>
int64_t sparse_row(const Column& events, uint32_t event) {
  auto it = std::lower_bound(events.begin(), events.end(), event);
  return it != events.end() && *it == event ? it - events.begin() : -1;
}

// nelems x the dtype's size; -1 when unknown, and when the product leaves int64 (a size from input
// never wraps: it is left out like an unknown one).
int64_t message_bytes(const std::string& type, int64_t in_nelems, int64_t out_nelems, int64_t group_size,
                      int64_t elem_bytes) {
  int64_t nelems = in_nelems;
  if (type == "allgather") {
    nelems = out_nelems;
    if (out_nelems < 0 && (in_nelems < 0 || group_size <= 0 || !multiply_checked(&nelems, in_nelems, group_size))) {
      nelems = -1;
    }
  }
  if (type == "reduce_scatter" && out_nelems > in_nelems) nelems = out_nelems;  // older writers swap them
  int64_t bytes = -1;
  if (nelems < 0 || elem_bytes <= 0 || !multiply_checked(&bytes, nelems, elem_bytes)) return -1;
  return bytes;
}

// Bytes per peer of an all-to-all(v) from its `In/Out split size` list: the list counts dim-0 rows per
// peer, so each row is nelems / (sum of the list) elements. Empty when the list is empty (equal
// splits), truncated ("...", past 30 peers), not a list of integers, or does not divide nelems: no
// per-peer figure is guessed.
std::vector<int64_t> split_bytes(std::string_view text, int64_t nelems, int64_t elem_bytes) {
  const auto splits = parse_int_list(text);
  if (!splits || splits->empty() || nelems < 0 || elem_bytes <= 0) return {};
  int64_t rows = 0;
  for (int64_t s : *splits) {
    if (s < 0 || !add_checked(&rows, s)) return {};
  }
  if (rows == 0 || nelems % rows != 0) return {};
  int64_t row_bytes = 0;
  if (!multiply_checked(&row_bytes, nelems / rows, elem_bytes)) return {};
  std::vector<int64_t> out;
  out.reserve(splits->size());
  for (int64_t s : *splits) {
    int64_t b = 0;
    if (!multiply_checked(&b, s, row_bytes)) return {};
    out.push_back(b);
  }
  return out;
}

}  // namespace

std::vector<int64_t> alltoall_split_bytes(std::string_view split_list, int64_t nelems, int64_t elem_bytes) {
  return split_bytes(split_list, nelems, elem_bytes);
}

std::string format_rank_list(const std::vector<int64_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j > i ? fmt::format("{}-{}", ranks[i], ranks[j]) : fmt::format("{}", ranks[i]);
    i = j + 1;
  }
  return out;
}

std::optional<std::vector<int64_t>> parse_rank_list(std::string_view text) {
  constexpr int64_t kMaxRank = int64_t{1} << 40;
  constexpr size_t kMaxRanks = size_t{1} << 24;
  std::vector<int64_t> out;
  if (text.empty()) return out;
  size_t pos = 0;
  auto number = [&](int64_t* v) {
    const size_t start = pos;
    *v = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && *v < kMaxRank) {
      *v = *v * 10 + (text[pos++] - '0');
    }
    return pos > start && *v < kMaxRank;
  };
  while (true) {
    int64_t first = 0;
    if (!number(&first)) return std::nullopt;
    int64_t last = first;
    if (pos < text.size() && text[pos] == '-') {
      ++pos;
      if (!number(&last) || last < first) return std::nullopt;
    }
    if (static_cast<uint64_t>(last - first) >= kMaxRanks - out.size()) return std::nullopt;
    for (int64_t r = first; r <= last; ++r) out.push_back(r);
    if (pos == text.size()) return out;
    if (text[pos++] != ',') return std::nullopt;
  }
}

std::string canonical_collective_type(std::string_view name) {
  std::string_view body = name;
  for (std::string_view prefix : {"nccl:", "gloo:", "c10d::", "mpi:", "ucc:"}) {
    if (starts_with_nocase(body, prefix)) {
      body.remove_prefix(prefix.size());
      break;
    }
  }
  // Kernel names: ncclKernel_AllReduce_RING_LL_Sum_float(...), ncclDevKernel_SendRecv(...).
  const std::string lowered = lower_without_underscores(std::string(name.substr(0, std::min<size_t>(name.size(), 64))));
  const size_t kernel = lowered.find("kernel");
  if (lowered.find("nccl") != std::string::npos && kernel != std::string::npos) {
    const size_t underscore = name.find('_', name.find("ernel"));
    if (underscore == std::string_view::npos) return "unknown";
    body = name.substr(underscore + 1);
    body = body.substr(0, body.find_first_of("_(<"));
  }
  const std::string s = lower_without_underscores(body);
  if (s.find("allreduce") != std::string::npos) return "allreduce";
  if (s.find("allgather") != std::string::npos) return "allgather";
  if (s.find("reducescatter") != std::string::npos) return "reduce_scatter";
  if (s.find("alltoall") != std::string::npos) return "alltoall";
  if (s.find("broadcast") != std::string::npos) return "broadcast";
  if (s.find("sendrecv") != std::string::npos) return "sendrecv";
  if (s.rfind("send", 0) == 0) return "send";
  if (s.rfind("recv", 0) == 0) return "recv";
  if (s.find("barrier") != std::string::npos) return "barrier";
  if (s.rfind("reduce", 0) == 0) return "reduce";
  if (s.rfind("gather", 0) == 0) return "gather";
  if (s.rfind("scatter", 0) == 0) return "scatter";
  if (kernel != std::string::npos && lowered.find("nccl") != std::string::npos) return "unknown";
  return {};
}

std::optional<int64_t> dtype_bytes(std::string_view dtype) {
  std::string d = lower_without_underscores(dtype);
  if (d.rfind("c10::", 0) == 0) d.erase(0, 5);
  if (d.rfind("torch.", 0) == 0) d.erase(0, 6);
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"float", 4},        {"float32", 4},  {"double", 8},     {"float64", 8},      {"half", 2},
      {"float16", 2},      {"bfloat16", 2}, {"long", 8},       {"longint", 8},      {"int64", 8},
      {"longlong", 8},     {"int", 4},      {"int32", 4},      {"short", 2},        {"shortint", 2},
      {"int16", 2},        {"char", 1},     {"signedchar", 1}, {"int8", 1},         {"byte", 1},
      {"unsignedchar", 1}, {"uint8", 1},    {"bool", 1},       {"complexfloat", 8}, {"complexdouble", 16},
      {"uint16", 2},       {"uint32", 4},   {"uint64", 8},     {"unsignedint", 4},  {"unsignedlong", 8}};
  for (const auto& [name, size] : kSizes) {
    if (d == name) return size;
  }
  if (d.rfind("float8", 0) == 0) return 1;
  return std::nullopt;
}

RankCollectives extract_collectives(const trace::RankTrace& trace) {
  return extract_collectives(trace, find_profiler_steps(trace));
}

RankCollectives extract_collectives(const trace::RankTrace& trace, const ProfilerSteps& steps) {
  RankCollectives out;
  out.rank = trace.rank;
  out.path = trace.path;
  for (const auto& [key, raw] : trace.metadata.other) {
    if (key == "host_name" && raw.size() >= 2 && raw.front() == '"') out.host = raw.substr(1, raw.size() - 2);
  }
  if (trace.metadata.distributed) {
    out.world_size = trace.metadata.distributed->world_size.value_or(-1);
    for (const trace::ProcessGroupConfig& pg : trace.metadata.distributed->pg_config) {
      out.groups.push_back({pg.name, pg.desc, pg.size, format_rank_list(pg.ranks)});
    }
  }
  const trace::EventTable& ev = trace.events;
  const trace::CollectiveTable& ct = trace.collectives;
  const trace::ShapesTable& st = trace.shapes;

  // Host ops by External id: collective metadata (record_param_comms) and nccl:* shapes.
  std::unordered_map<int64_t, uint32_t> meta_by_external;
  for (size_t r = 0; r < ct.size(); ++r) {
    const uint32_t e = ct.event[r];
    if (!trace::is_device_category(ev.cat[e]) && ev.external_id[e] != trace::kNone) {
      meta_by_external.emplace(ev.external_id[e], static_cast<uint32_t>(r));
    }
  }
  std::unordered_map<int64_t, uint32_t> shapes_by_external;
  for (size_t r = 0; r < st.size(); ++r) {
    const uint32_t e = st.event[r];
    if (ev.external_id[e] != trace::kNone && starts_with_nocase(trace.name(e), "nccl:")) {
      shapes_by_external.emplace(ev.external_id[e], static_cast<uint32_t>(r));
    }
  }
  std::unordered_map<int64_t, int64_t> launch_by_correlation;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (trace::is_runtime_category(ev.cat[i]) && ev.correlation[i] != trace::kNone) {
      launch_by_correlation.emplace(ev.correlation[i], ev.ts[i]);
    }
  }

  // Steps: the ProfilerStep windows, what the step's thread did in them, and the calls they launched.
  std::unordered_map<uint32_t, std::vector<Interval>> busy_by_track, loader_by_track;
  for (const ProfilerStepWindow& w : steps.steps) busy_by_track.emplace(ev.track[w.event], std::vector<Interval>{});
  for (size_t i = 0; i < ev.size(); ++i) {
    if (!trace::is_cpu_op_category(ev.cat[i]) || ev.phase[i] != trace::Phase::kComplete) continue;
    auto it = busy_by_track.find(ev.track[i]);
    if (it == busy_by_track.end() || profiler_step_number(trace.name(i))) continue;
    it->second.push_back({ev.ts[i], ev.end(i)});
    if (starts_with_nocase(trace.name(i), "enumerate(dataloader)"))
      loader_by_track[ev.track[i]].push_back({ev.ts[i], ev.end(i)});
  }
  for (auto& [track, v] : busy_by_track) v = union_intervals(std::move(v));
  for (auto& [track, v] : loader_by_track) v = union_intervals(std::move(v));
  std::unordered_map<int64_t, uint32_t> step_track;  // step number -> track of its annotation
  for (const ProfilerStepWindow& w : steps.steps) {
    step_track.emplace(w.step, ev.track[w.event]);
    StepRow row;
    row.step = w.step;
    row.start_ns = w.start_ns;
    row.end_ns = w.end_ns;
    row.gpu_busy_ns = w.gpu_busy_ns;
    // Clipped by binary search: a merge from the first interval was O(steps x intervals) over many
    // windows (issue 30: every per-window loop is linear in what the window holds).
    row.host_busy_ns = total_length(clip_intervals(busy_by_track[ev.track[w.event]], w.start_ns, w.end_ns));
    if (auto it = loader_by_track.find(ev.track[w.event]); it != loader_by_track.end()) {
      row.dataloader_ns = total_length(clip_intervals(it->second, w.start_ns, w.end_ns));
    }
    out.steps.push_back(row);
  }
  std::stable_sort(out.steps.begin(), out.steps.end(),
                   [](const StepRow& a, const StepRow& b) { return a.start_ns < b.start_ns; });
  std::vector<uint32_t> kernels, gloo_ops;
  KernelNameTypes kernel_types(trace.strings);
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.cat[i] == trace::Category::kKernel && kernel_types.of(ev.name[i]) == KernelType::kCommunication) {
      kernels.push_back(static_cast<uint32_t>(i));
    } else if (trace::is_cpu_op_category(ev.cat[i]) && starts_with_nocase(trace.name(i), "gloo:")) {
      gloo_ops.push_back(static_cast<uint32_t>(i));
    }
  }
  out.gpu = !kernels.empty();
  const std::vector<uint32_t>& chosen = out.gpu ? kernels : gloo_ops;

  // The only process group, when the trace lists exactly one: every call is on it.
  const GroupConfig* only_group = out.groups.size() == 1 ? &out.groups[0] : nullptr;

  // The row of each call's step (-1: none), parallel to out.calls until they are sorted below.
  std::vector<int64_t> row_of_call;
  row_of_call.reserve(chosen.size());
  std::vector<int64_t> launch_of_call;  // parallel to out.calls until they are sorted below
  launch_of_call.reserve(chosen.size());
  for (uint32_t e : chosen) {
    CollectiveCall call;
    call.device = out.gpu;
    call.start_ns = ev.ts[e];
    call.end_ns = ev.end(e);
    // The step whose window holds the call's launch (a kernel's runtime call, else the call itself).
    int64_t launch = ev.ts[e];
    if (auto it = launch_by_correlation.find(ev.correlation[e]); out.gpu && it != launch_by_correlation.end()) {
      launch = it->second;
    }
    // Windows are by start and disjoint (profiler_steps.h): the last starting at or before the launch.
    int64_t in_row = -1;
    auto step_row = std::upper_bound(out.steps.begin(), out.steps.end(), launch,
                                     [](int64_t t, const StepRow& r) { return t < r.start_ns; });
    if (step_row != out.steps.begin() && launch < std::prev(step_row)->end_ns) {
      StepRow& row = *std::prev(step_row);
      call.step = row.step;
      row.comm_ns += call.duration_ns();
      in_row = std::prev(step_row) - out.steps.begin();
    }
    row_of_call.push_back(in_row);
    launch_of_call.push_back(launch);
    int64_t meta = sparse_row(ct.event, e);
    if (meta < 0 && out.gpu && ev.external_id[e] != trace::kNone) {
      if (auto it = meta_by_external.find(ev.external_id[e]); it != meta_by_external.end()) meta = it->second;
    }
    call.type = canonical_collective_type(trace.name(e));
    int64_t in_nelems = -1, out_nelems = -1;
    std::string_view in_split, out_split;
    if (meta >= 0) {
      call.seq = ct.seq[meta];
      in_split = trace.strings.view(ct.in_split_sizes[meta]);
      out_split = trace.strings.view(ct.out_split_sizes[meta]);
      const std::string from_meta = canonical_collective_type(trace.strings.view(ct.collective_name[meta]));
      if (!from_meta.empty()) call.type = from_meta;
      call.dtype = std::string(trace.strings.view(ct.dtype[meta]));
      in_nelems = ct.in_msg_nelems[meta];
      out_nelems = ct.out_msg_nelems[meta];
      call.group_size = ct.group_size[meta];
      call.group = std::string(trace.strings.view(ct.process_group_name[meta]));
      call.group_ranks = normalise_ranks(trace.strings.view(ct.process_group_ranks[meta]));
    }
    if (in_nelems < 0) {
      // No collective metadata: the size from the op's (gloo) or its nccl:* annotation's shapes.
      int64_t shapes = out.gpu ? -1 : sparse_row(st.event, e);
      if (shapes < 0 && out.gpu && ev.external_id[e] != trace::kNone) {
        if (auto it = shapes_by_external.find(ev.external_id[e]); it != shapes_by_external.end()) shapes = it->second;
      }
      if (shapes >= 0) {
        in_nelems = first_tensor_elements(trace.strings.view(st.input_dims[shapes])).value_or(-1);
        call.dtype = std::string(first_type(trace.strings.view(st.input_types[shapes])));
      }
    }
    if (only_group != nullptr) {
      if (call.group.empty()) call.group = only_group->name;
      if (call.group_ranks.empty()) call.group_ranks = only_group->ranks;
      if (call.group_size < 0) call.group_size = only_group->size;
    }
    // Kernels whose own args lack Seq (kineto before 2024) take it from their record_param_comms op.
    if (call.seq < 0 && out.gpu && ev.external_id[e] != trace::kNone) {
      if (auto it = meta_by_external.find(ev.external_id[e]); it != meta_by_external.end()) {
        call.seq = ct.seq[it->second];
      }
    }
    const int64_t elem = dtype_bytes(call.dtype).value_or(-1);
    call.bytes = message_bytes(call.type, in_nelems, out_nelems, call.group_size, elem);
    if (call.type == "alltoall") {
      call.in_split_bytes = split_bytes(in_split, in_nelems, elem);
      call.out_split_bytes = split_bytes(out_split, out_nelems, elem);
    }
    out.calls.push_back(std::move(call));
  }
  attach_alltoall_details(trace, launch_of_call, &out.calls);
  // Host idle: the step's time covered neither by its thread's ops nor by the rank's collectives.
  std::vector<std::vector<uint32_t>> calls_of_row(out.steps.size());
  for (size_t c = 0; c < out.calls.size(); ++c) {
    if (row_of_call[c] >= 0) calls_of_row[static_cast<size_t>(row_of_call[c])].push_back(static_cast<uint32_t>(c));
  }
  for (size_t k = 0; k < out.steps.size(); ++k) {
    StepRow& row = out.steps[k];
    std::vector<Interval> active = clip_intervals(busy_by_track[step_track[row.step]], row.start_ns, row.end_ns);
    for (const uint32_t c : calls_of_row[k]) {
      const CollectiveCall& call = out.calls[c];
      active.push_back({std::max(call.start_ns, row.start_ns), std::min(call.end_ns, row.end_ns)});
    }
    row.host_idle_ns = (row.end_ns - row.start_ns) - total_length(union_intervals(std::move(active)));
  }
  std::stable_sort(out.calls.begin(), out.calls.end(),
                   [](const CollectiveCall& a, const CollectiveCall& b) { return a.start_ns < b.start_ns; });

  return out;
}

}  // namespace scaleprof::analysis
