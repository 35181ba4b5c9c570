// Fuzzes the progress record `scaleprof mlflow sync` reads back from disk at every start
// (mlflow_sync/sync_progress.h): any bytes must give a record or a one-line error, and a record
// must survive its own round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "mlflow_sync/sync_progress.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = scaleprof::mlflow_sync::parse_progress(text, "progress.json");
  if (!parsed) return 0;
  auto again = scaleprof::mlflow_sync::parse_progress(scaleprof::mlflow_sync::progress_json(parsed.value()), "again");
  if (!again || again.value().runs.size() != parsed.value().runs.size() ||
      again.value().server != parsed.value().server) {
    std::abort();  // what we write must read back as the same record
  }
  return 0;
}
