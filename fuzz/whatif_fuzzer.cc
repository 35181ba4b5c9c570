// The what-if model (issue 29) over arbitrary timelines and change texts: analysis/whatif.h's replay,
// whatif_gains.h's gains, projection and parser. Timelines reach the model from traces through the
// engine, whose reader bounds every time; here every field is whatever the input says (times at the
// int64 extremes, joins out of order, calls naming ranks that never arrive), so that the model's own
// arithmetic and its order of replay are what is tested: no crash, no undefined behaviour, no hang.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "analysis/whatif.h"
#include "analysis/whatif_gains.h"

namespace {

struct Bytes {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t byte() { return at < size ? data[at++] : 0; }
  int64_t i64() {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v = (v << 8) | byte();
    return static_cast<int64_t>(v);
  }
  // Small times mostly (so that replays do something), the extremes sometimes.
  int64_t time() {
    const uint8_t kind = byte();
    if (kind < 200) return static_cast<int64_t>(byte()) * 1000 + static_cast<int64_t>(byte());
    return i64();
  }
};

scaleprof::tables::RunTimeline timeline(Bytes* in) {
  scaleprof::tables::RunTimeline t;
  const int calls = in->byte() % 5;
  const int ranks = 1 + in->byte() % 4;
  for (int c = 0; c < calls; ++c) {
    scaleprof::tables::TimelineCall call;
    for (int r = 0; r < ranks; ++r) {
      if (in->byte() % 4 == 0) continue;
      call.ranks.push_back({r, in->time(), in->time()});
    }
    t.calls.push_back(call);
  }
  for (int r = 0; r < ranks; ++r) {
    const int steps = 1 + in->byte() % 3;
    for (int s = 0; s < steps; ++s) {
      scaleprof::tables::TimelineStep st{r, in->byte() % 4, in->time(), {}};
      const int joins = 1 + in->byte() % 4;
      for (int j = 0; j < joins; ++j) {
        scaleprof::tables::TimelineJoin join;
        join.call = j + 1 == joins ? -1 : static_cast<int64_t>(in->byte() % 6) - 1;
        join.time_ns = in->time();
        for (auto& p : join.parts) p = in->byte() % 8 == 0 ? in->i64() : in->time();
        st.joins.push_back(join);
      }
      t.steps.push_back(st);
    }
  }
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaleprof::analysis;
  // The first line is a --what-if text; the rest describes two scales' timelines.
  const auto* nl = static_cast<const uint8_t*>(std::memchr(data, '\n', size));
  const size_t line = nl != nullptr ? static_cast<size_t>(nl - data) : size;
  const std::string_view text(reinterpret_cast<const char*>(data), line);
  const auto spec = parse_what_if(text);
  Bytes in{data + line, size - line};
  const scaleprof::tables::RunTimeline one = timeline(&in), two = timeline(&in);
  WhatIf w;
  w.transfer_scale = (in.byte() % 3) * 0.5;
  w.part_scale[in.byte() % w.part_scale.size()] = (in.byte() % 3) * 0.5;
  w.ranks_at_median = {static_cast<int64_t>(in.byte() % 4)};
  (void)replay(two, w);
  (void)replay(two, WhatIf{});
  (void)slowest_rank(two);
  WhatIfScale base{1, 1.0, 1.0, 100, {&one}};
  WhatIfScale at{2, 0.6, 0.9, 50, {&two}};
  ScaleLoss loss;
  loss.n0 = 1;
  loss.n1 = 2;
  loss.t0 = 1.0;
  loss.t1 = 0.6;
  loss.lost = 1 - 1.0 / 1.2;
  add_what_if_gains(base, at, &loss);
  (void)project_epoch(base, at, 4, false);
  if (spec.ok()) (void)apply_what_if(spec.value(), base, at, false);
  return 0;
}
