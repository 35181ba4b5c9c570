// One rank's collective calls and step rows: the compact per-rank input of the cross-rank analyses.
//
// A rank's trace is reduced to these rows right after it is read, so thousands of ranks can be
// analysed together without keeping their event tables (see docs/scale.md).
//
// Which events are collective calls:
// * GPU runs: the communication kernels (ncclKernel_*, ncclDevKernel_*, RCCL's names; one call per
//   kernel). Their metadata (Collective name, dtype, In/Out msg nelems, Group size, Process Group
//   Name/Ranks) comes from the kernel's own args (PyTorch >= 2.2), else from the
//   record_param_comms op with the kernel's External id; the size, failing both, from the
//   `Input Dims`/`Input type` of the `nccl:*` annotation with that External id.
// * CPU runs (no communication kernels): the `gloo:*` ops, which gloo records on its worker threads
//   around the transfer itself; their size comes from `Input Dims` × `Input type`. The `c10d::*` ops
//   on the calling thread only enqueue the work and are not calls.
//
// Message size follows nccl-tests: the larger buffer (all-gather: the gathered output; reduce-scatter:
// the input; others: the input), nelems × the dtype's size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/profiler_steps.h"
#include "trace/event_table.h"

namespace scaleprof::analysis {

struct CollectiveCall {
  std::string type;         // canonical: allreduce, allgather, reduce_scatter, alltoall, broadcast, reduce, ...
  std::string group;        // Process Group Name; "" when the trace does not say
  std::string group_ranks;  // "0-3" (format_rank_list) from Process Group Ranks (or the only pg_config); "" unknown
  int64_t group_size = -1;
  int64_t seq = -1;    // Seq of the call in its group (record_param_comms / kernel args), -1 absent
  int64_t step = -1;   // ProfilerStep#N holding the call's launch, -1 none
  int64_t bytes = -1;  // message size (nccl-tests convention), -1 unknown
  std::string dtype;   // as written ("Float", "float", "c10::BFloat16")
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  bool device = false;  // a GPU kernel (true) or a CPU op (gloo)
  // all-to-all(v): bytes sent to each peer, from `In split size` (rows per peer) × the bytes of a row
  // (In msg nelems / the rows, × the dtype's size); empty for equal splits or a list that cannot be
  // used whole (truncated past 30 peers): then the message size stands for what each rank sends.
  std::vector<int64_t> in_split_bytes;
  std::vector<int64_t> out_split_bytes;  // bytes received from each peer
  // all-to-all: the innermost record_function / nn.Module enclosing the call's launch ("" none;
  // all_to_all_cost.h).
  std::string annotation;

  int64_t duration_ns() const { return end_ns - start_ns; }
};

// Per ProfilerStep of one rank: where its host time went, to explain why a rank is late.
struct StepRow {
  int64_t step = -1;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t host_busy_ns = 0;   // union of the ops on the step's thread inside the step
  int64_t dataloader_ns = 0;  // union of enumerate(DataLoader)#... on that thread
  int64_t gpu_busy_ns = 0;    // union of the step's kernels (0 on CPU runs)
  int64_t comm_ns = 0;        // sum of the rank's collective call durations in the step
  // Time in the step when the step's thread ran no op and none of the rank's collectives was in
  // flight: sleeping, waiting on I/O, or Python outside ops.
  int64_t host_idle_ns = 0;
};

// A process group of distributedInfo.pg_config, its ranks as one compact key (format_rank_list): kept
// per rank for thousands of ranks, where the listed ranks would be 8 KB per rank.
struct GroupConfig {
  std::string name;
  std::string desc;
  int64_t size = -1;
  std::string ranks;  // "0-1023"
};

struct RankCollectives {
  int64_t rank = 0;
  std::string path;
  std::string host;                   // the trace's host_name, "" when absent
  int64_t world_size = -1;            // distributedInfo.world_size
  std::vector<GroupConfig> groups;    // distributedInfo.pg_config
  std::vector<CollectiveCall> calls;  // by start time
  std::vector<StepRow> steps;         // by start time
  bool gpu = false;                   // calls are GPU kernels
};

// Canonical collective type from a Collective name ("_allgather_base", "allreduce_coalesced"),
// a kernel name ("ncclDevKernel_AllGather_RING_LL") or a gloo/c10d op name ("gloo:all_reduce").
// "" when the name is not a collective.
std::string canonical_collective_type(std::string_view name);

// Bytes of one element of a dtype as Kineto writes it ("Float", "BFloat16", "float", "c10::Half",
// "long int"); nullopt when unknown.
std::optional<int64_t> dtype_bytes(std::string_view dtype);

// A rank list in its compact canonical text: runs of consecutive ranks as "a-b", other ranks alone,
// comma-separated, in the list's order ("0-7,16,18"). Every call of every rank carries its group's
// list, so a 1,024-rank group must be "0-1023", not 5 KB per call (docs/scale.md: memory).
std::string format_rank_list(const std::vector<int64_t>& ranks);

// The ranks of a text in format_rank_list's syntax; nullopt when it is not one (other characters, a
// range going down, ranks of 2^40 or more, more than 2^24 ranks in all).
std::optional<std::vector<int64_t>> parse_rank_list(std::string_view text);

// Bytes per peer of an all-to-all(v) from a split-size list ("[1000, 4000000]", dim-0 rows per peer) and
// the tensor's elements: rows × (nelems / all rows) × elem_bytes. Empty when the list is empty (equal
// splits), truncated, not integers, does not divide nelems, or a product passes int64.
std::vector<int64_t> alltoall_split_bytes(std::string_view split_list, int64_t nelems, int64_t elem_bytes);

// Reduces one rank's trace to its collective calls and step rows.
RankCollectives extract_collectives(const trace::RankTrace& trace);
// The same with the rank's ProfilerStep windows already found (find_profiler_steps(trace)): a caller
// that reports the steps too finds them once (they were 8 % of `trace summary`'s CPU time, twice).
RankCollectives extract_collectives(const trace::RankTrace& trace, const ProfilerSteps& steps);

}  // namespace scaleprof::analysis
