// libFuzzer target for the partial-results reader (`scaleprof trace merge`): any bytes must give
// rows or a one-line error naming the file, never a crash, hang or sanitizer report; rows that are
// accepted must survive the matcher and be written back to a file that reads the same.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/collective_match.h"
#include "analysis/stragglers.h"
#include "engine/partial_results.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaleprof;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = engine::parse_partial("fuzz", text);
  if (!parsed.ok()) {
    if (parsed.error().message.find('\n') != std::string::npos) __builtin_trap();
    if (parsed.error().message.rfind("fuzz: ", 0) != 0) __builtin_trap();
    return 0;
  }
  const engine::PartialResults& p = parsed.value();
  if (p.ranks.size() > 64) return 0;  // the matcher's cost grows with ranks x calls; keep runs fast
  const analysis::CollectiveAnalysis a = analysis::match_collectives(p.ranks);
  (void)analysis::find_stragglers(p.ranks, a);
  auto again = engine::parse_partial("fuzz", engine::write_partial(p));
  if (!again.ok() || engine::write_partial(again.value()) != engine::write_partial(p)) __builtin_trap();
  return 0;
}
