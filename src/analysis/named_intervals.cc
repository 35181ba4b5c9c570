#include "analysis/named_intervals.h"

#include <algorithm>
#include <cstdint>

namespace scaleprof::analysis {

std::vector<Intervals> named_intervals(const trace::RankTrace& t, const std::vector<std::string>& texts) {
  std::vector<Intervals> out(texts.size());
  if (texts.empty()) return out;
  // Per string of the pool, a bit per text it contains (texts past 64 match nothing: the CLI and
  // Python never pass that many).
  std::vector<uint64_t> matches(t.strings.size(), 0);
  for (size_t id = 0; id < matches.size(); ++id) {
    const std::string_view name = t.strings.view(static_cast<trace::StringId>(id));
    for (size_t k = 0; k < texts.size() && k < 64; ++k) {
      if (name.find(texts[k]) != std::string_view::npos) matches[id] |= uint64_t{1} << k;
    }
  }
  const trace::EventTable& ev = t.events;
  for (size_t i = 0; i < ev.size(); ++i) {
    if (ev.phase[i] != trace::Phase::kComplete || ev.dur[i] <= 0) continue;
    const uint64_t m = ev.name[i] < matches.size() ? matches[ev.name[i]] : 0;
    if (m == 0) continue;
    for (size_t k = 0; k < texts.size() && k < 64; ++k) {
      if ((m >> k) & 1U) out[k].emplace_back(ev.ts[i], ev.end(i));
    }
  }
  for (Intervals& iv : out) {
    std::sort(iv.begin(), iv.end());
    Intervals merged;
    for (const auto& [a, b] : iv) {
      if (!merged.empty() && a <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, b);
      } else {
        merged.emplace_back(a, b);
      }
    }
    iv = std::move(merged);
  }
  return out;
}

int64_t covered_ns(const Intervals& iv, int64_t from, int64_t to) {
  if (to <= from) return 0;
  auto it = std::upper_bound(iv.begin(), iv.end(), from,
                             [](int64_t x, const std::pair<int64_t, int64_t>& r) { return x < r.second; });
  // Each piece lies inside [from, to); summed wide, as a window read from a file may span any range.
  __int128 sum = 0;
  for (; it != iv.end() && it->first < to; ++it) {
    sum += static_cast<__int128>(std::min(it->second, to)) - std::max(it->first, from);
  }
  return static_cast<int64_t>(std::min<__int128>(sum, INT64_MAX));
}

}  // namespace scaleprof::analysis
