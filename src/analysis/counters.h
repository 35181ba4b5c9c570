// Counters of one rank (issue 23 item 3): the launch queue of each stream and the memcpy/memset
// bandwidth of each direction over time, with HTA's definitions (hta/analyzers/trace_counters.py)
// and statistics weighted by how long each value held.
//
// Queue length of a stream (HTA's definition): +1 at the start of each runtime launch call
// (is_launch_api_name) whose correlation id leads to device work on the stream, -1 at the start of
// that work. It counts work enqueued and not yet started. Every event gives one point (HTA's rows);
// at equal timestamps decrements come before increments, then file order, so the series does not
// depend on a sort's stability (HTA's pandas sort is unstable: its per-point statistics change with
// the pandas version where timestamps tie).
//
// Memcpy bandwidth of a direction (HTA's): memory work (copies and sets; the name's first 11
// characters "Memcpy HtoD", ..., "Memset", else "Memcpy Unknown") adds its bandwidth (Kineto's
// "memory bandwidth (GB/s)", else bytes / duration) at its start and removes it at its end; a
// zero duration lasts 1 us as in HTA (its issue 20). The sum is over every stream and device of the
// rank. The value is exactly 0 whenever no copy of the direction is active (HTA's running float sum
// leaves residues such as 1e-13 there, which its summary counts as samples above 0).
//
// The statistics come twice: HTA's, over the points (pandas describe(): count, mean, std, min,
// quartiles, max; bandwidth only over points above 0), and weighted by time, each value by how long
// it held until the next point (the queue over the stream's span from its first to its last point,
// the bandwidth over the time some copy of the direction was active). On a queue that fills in a
// burst and drains slowly, the two differ by several times.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "trace/event_table.h"

namespace scaleprof::analysis {

// HTA's max_queue_length default (CUDA_MAX_LAUNCH_QUEUE_PER_STREAM).
inline constexpr int64_t kHtaMaxQueueLength = 1024;
// The limit asked for when none is given: find it in the trace (find_queue_limit). Counted as HTA
// counts, queues do not reach HTA's 1,024: launches block before, at a level that depends on the
// GPU, driver and kernels (896 on one shared trace, 1,021 on another; docs/cli.md).
inline constexpr int64_t kDefaultMaxQueueLength = 0;
// A launch call at least this long was blocked (the doc's trace: calls into a full queue take
// 1-7 ms, the median 3-5 us).
inline constexpr int64_t kBlockedLaunchNs = 1'000'000;
// No limit below this is taken from a trace: slow launches into so shallow a queue have other causes
// (on the shared trace that fills a queue, NCCL launches of 0.1-0.5 s at a queue of 17).
inline constexpr int64_t kMinQueueLimit = 64;

struct CounterPoint {
  int64_t ts = 0;    // ns
  double value = 0;  // queue length, or GB/s
};

// pandas' describe() over the points' values.
struct PointStats {
  int64_t count = 0;
  double mean = 0, std = 0, min = 0, p25 = 0, p50 = 0, p75 = 0, max = 0;
};

// Each value weighted by the time it held.
struct TimeWeightedStats {
  int64_t time_ns = 0;  // the time weighed: the stream's span, or the time copies were active
  double mean = 0, p50 = 0, p95 = 0, max = 0;
};

struct StreamQueue {
  int64_t stream = 0;
  int64_t pid = 0, tid = 0;  // of the stream's device work (the first seen)
  int64_t launches = 0;      // launches counted (each gives two points)
  PointStats points;         // HTA's get_queue_length_summary
  TimeWeightedStats weighted;
  int64_t empty_ns = 0;  // time at queue length 0 (or below) within the span
  // HTA's get_time_spent_blocked_on_full_queue, for this stream: the time the queue was at or
  // above the limit (until the next point), and the launch calls made there, with their host time
  // (a launch into a full queue blocks: its call lasts until a slot frees).
  int64_t full_ns = 0;
  int64_t full_launches = 0;
  int64_t full_launch_call_ns = 0;
};

struct DirectionBandwidth {
  std::string name;            // "Memcpy HtoD", "Memcpy DtoH", "Memcpy DtoD", "Memcpy PtoP", "Memset", ...
  int64_t copies = 0;          // with a bandwidth (Kineto's, or bytes and a duration)
  int64_t bytes = 0;           // of those that give their bytes
  PointStats points;           // HTA's get_memory_bw_summary: the points above 0 (GB/s)
  TimeWeightedStats weighted;  // over the time some copy was active (GB/s)
};

// Where a rank's queue limit came from.
enum class QueueLimitSource : uint8_t {
  kHta,     // HTA's 1,024: no launch blocked, so no queue was full
  kTrace,   // the level at which the trace's launches started to block (find_queue_limit)
  kOption,  // --max-queue-length
};
// "hta", "trace", "option"
std::string_view queue_limit_source_name(QueueLimitSource s);

struct RankCounters {
  int64_t max_queue_length = kHtaMaxQueueLength;  // the limit used
  QueueLimitSource limit_source = QueueLimitSource::kHta;
  int64_t trace_duration_ns = 0;              // first to last start of the rows (HTA's get_trace_duration)
  std::vector<StreamQueue> queues;            // by stream
  std::vector<DirectionBandwidth> bandwidth;  // by name
};

struct CounterSeries {
  int64_t key = 0;  // stream (queue) or index into names (bandwidth)
  int64_t pid = 0, tid = 0;
  std::vector<CounterPoint> points;
  // Queue series only, parallel to points: the host duration of the launch call at an increment, -1
  // at a decrement.
  std::vector<int64_t> call_ns;
};

struct RankCounterSeries {
  std::vector<CounterSeries> queues;     // by stream
  std::vector<std::string> names;        // bandwidth directions
  std::vector<CounterSeries> bandwidth;  // parallel to names
  std::vector<int64_t> copies;           // parallel to names: the copies with a bandwidth
  std::vector<int64_t> bytes;            // their bytes (of those that give them)
  int64_t duration_ns = 0;               // first to last start of the rows (HTA's get_trace_duration)
};

// The step functions of the events among `rows` (HTA's: the analysis window, analysis_window.h).
RankCounterSeries counter_series(const trace::RankTrace& trace, std::span<const uint32_t> rows);
// The level at which launches started to block: over every stream, the lowest queue length at
// which a launch call took kBlockedLaunchNs or more, counting only launches at a level of at least
// half the rank's deepest queue and at least kMinQueueLimit (a slow call into a shallow queue, a
// collective's launch or a module load, is not a full queue); nullopt when no launch blocked.
std::optional<int64_t> find_queue_limit(const RankCounterSeries& series);
// Their statistics; the queue counts as full at `max_queue_length` when > 0, else at the limit
// found in the trace (HTA's 1,024 when none is).
RankCounters summarize_counters(const RankCounterSeries& series, int64_t max_queue_length);
// Both at once.
RankCounters compute_counters(const trace::RankTrace& trace, std::span<const uint32_t> rows, int64_t max_queue_length);

// The direction of a memory event's name as HTA names it (get_memory_kernel_type).
std::string memory_direction(std::string_view name);

}  // namespace scaleprof::analysis
