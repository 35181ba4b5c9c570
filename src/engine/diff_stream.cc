#include "engine/diff_stream.h"

#include <algorithm>
#include <optional>
#include <thread>
#include <utility>

#include "core/task_group.h"
#include "engine/rank_stream.h"

namespace scaleprof::engine {

Result<StreamedDiffSide> stream_diff_side(const std::vector<std::string>& paths, const trace::LoadOptions& load,
                                          const analysis::DiffSummaryOptions& options) {
  std::vector<analysis::DiffRankSummary> ranks;
  auto reduce = [&](const trace::RankTrace& t, unsigned /*threads_per_file*/) {
    RankReduction<analysis::DiffRankSummary> out;
    out.parts = analysis::summarize_for_diff(t, options);
    return out;
  };
  auto every_rank = [](int64_t rank) { return rank >= 0; };
  auto reduced = reduce_ranks(paths, load, reduce, every_rank, &ranks);
  if (!reduced) return reduced.error();
  StreamedDiffSide out;
  out.set = std::move(reduced.value().set);
  out.repair_notes = std::move(reduced.value().repair_notes);
  out.ranks = std::move(ranks);
  return out;
}

StreamedDiffSides stream_diff_sides(const std::vector<std::string>& paths_a, const std::vector<std::string>& paths_b,
                                    const trace::LoadOptions& load, const analysis::DiffSummaryOptions& options) {
  const unsigned threads = load.threads ? load.threads : std::max(1U, std::thread::hardware_concurrency());
  if (threads < 2) {
    auto a = stream_diff_side(paths_a, load, options);
    return {std::move(a), stream_diff_side(paths_b, load, options)};
  }
  trace::LoadOptions load_a = load;
  trace::LoadOptions load_b = load;
  load_a.threads = threads - threads / 2;
  load_b.threads = threads / 2;
  std::optional<Result<StreamedDiffSide>> a;
  std::optional<Result<StreamedDiffSide>> b;
  // Each side's exception (out of memory) comes back as that side's error (core/task_group.h).
  TaskGroup side_a;
  TaskGroup side_b;
  side_a.spawn([&] { a.emplace(stream_diff_side(paths_a, load_a, options)); });
  side_b.run_here([&] { b.emplace(stream_diff_side(paths_b, load_b, options)); });
  const Status a_joined = side_a.join("reading the traces");
  const Status b_joined = side_b.join("reading the traces");
  if (!a_joined) a.emplace(a_joined.error());
  if (!b_joined) b.emplace(b_joined.error());
  return {std::move(*a), std::move(*b)};
}

}  // namespace scaleprof::engine
