// Fuzzes the progress record `scaleprof mlflow sync` reads back from disk at every start
// (mlflow_sync/sync_progress.h): any bytes must give a record or a one-line error, and a record
// must survive its own round trip. Then the same bytes as a file on disk: loading never fails on
// content (a truncated or corrupt record is set aside and the sync starts from the server), and a
// file set aside keeps every byte, under its new name, while the original name is free again.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>

#include "mlflow_sync/sync_progress.h"

namespace {

namespace fs = std::filesystem;

const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "sync_progress_fuzz_XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) std::abort();
    return fs::path(tmpl);
  }();
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace scaleprof::mlflow_sync;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_progress(text, "progress.json");
  if (parsed) {
    auto again = parse_progress(progress_json(parsed.value()), "again");
    if (!again || again.value().runs.size() != parsed.value().runs.size() ||
        again.value().server != parsed.value().server) {
      std::abort();  // what we write must read back as the same record
    }
  }

  const fs::path path = scratch() / "p.json";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  auto loaded = load_progress(path.string());
  if (!loaded) std::abort();  // content alone never stops a sync
  const LoadedProgress& l = loaded.value();
  if (parsed) {
    if (!l.set_aside.empty() || l.progress.runs.size() != parsed.value().runs.size()) std::abort();
    if (slurp(path) != text) std::abort();  // a good record is only read
  } else {
    if (l.set_aside.empty() || l.problem.empty() || !l.progress.runs.empty()) std::abort();
    if (fs::exists(path)) std::abort();
    if (slurp(l.set_aside) != text) std::abort();  // nothing recorded is lost
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(scratch(), ec)) fs::remove(entry.path(), ec);
  return 0;
}
