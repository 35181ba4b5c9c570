// Fuzzes MLflow server responses WITH PAGINATION: the input is a sequence of response bodies that
// the one pagination mechanism (importers/mlflow/mlflow_pages.h) reads as consecutive pages of runs/search,
// metrics/get-history or artifacts/list, exactly as the server store and `mlflow sync` read them
// from a server. Every message it returns then goes through the credential redactor with a secret,
// which must not appear in the result.
//
// Layout: byte 0 picks the call; the rest is split into pages at each "\x1e" (record separator).
// A fetch past the last page is a transport error, as a server that went away.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/credential_redaction.h"
#include "importers/mlflow/mlflow_pages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using namespace scaleprof::importers;  // NOLINT(google-build-using-namespace): one file, one namespace
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> pages;
  size_t from = 0;
  for (size_t sep = text.find('\x1e'); sep != std::string_view::npos; sep = text.find('\x1e', from)) {
    pages.emplace_back(text.substr(from, sep - from));
    from = sep + 1;
  }
  pages.emplace_back(text.substr(from));
  size_t next = 0;
  const PageFetcher fetch = [&](const std::string&) -> scaleprof::Result<std::string> {
    if (next >= pages.size()) return scaleprof::Error{"no more pages"};
    return pages[next++];
  };
  PageLimits limits;  // small, so a fuzz input cannot make a slow run
  limits.max_pages = 64;
  limits.max_rows = 100'000;
  limits.max_bytes = 1 << 20;
  std::string message;
  switch (data[0] % 3) {
    case 0: {
      auto r = read_all_runs(limits, fetch);
      if (!r) message = r.error().message;
      break;
    }
    case 1: {
      auto r = read_metric_history(limits, fetch);
      if (!r) message = r.error().message;
      break;
    }
    default: {
      auto r = read_artifact_list(limits, fetch);
      if (!r) message = r.error().message;
      break;
    }
  }
  if (next > pages.size() || next > static_cast<size_t>(limits.max_pages) + 1) std::abort();
  // The redactor on the message and on the raw server text: a known secret never survives.
  static const std::vector<std::string> kSecrets = {"S3CR3T-t0ken"};
  for (const std::string& shown :
       {scaleprof::redact_credentials(message, kSecrets), scaleprof::redact_credentials(text, kSecrets)}) {
    if (shown.find(kSecrets[0]) != std::string::npos) std::abort();
  }
  (void)scaleprof::redact_url(text);
  return 0;
}
