// The local record of a sync's progress: which server run holds each synced scaleprof run and rank,
// and how far each got. Written atomically (core/output_file.h) after each step, so a sync killed at
// any moment finds either the previous record or the next one, never half of one.
//
// The server stays the truth: every run carries its sync id as a tag and is searched for before it
// is created, and what a run holds is read from the server, never taken from this file, so a lost,
// stale or edited progress file costs time, never a duplicate or a missing point. The file is a
// record for people and tools: which server run holds each scaleprof run and how far a sync got.
// A file that is not a progress record (cut by a full disk, edited by hand) is set aside, renamed,
// never deleted, and the sync rebuilds the record from the server.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "core/result.h"

namespace scaleprof::mlflow_sync {

inline constexpr int kProgressVersion = 1;
// The sync's folder below the root: progress records and locks, one per server.
inline constexpr const char* kStateDir = ".scaleprof-sync";

struct RunProgress {
  std::string run_id;         // the server's run
  bool metrics_done = false;  // every metric point was accepted
  bool complete = false;      // params, tags, metrics, artifacts and final status are on the server
};

struct SyncProgress {
  std::string server;                       // the server the record is about, as messages show it
  std::map<std::string, RunProgress> runs;  // by sync id
};

std::string progress_json(const SyncProgress& progress);

// A file that is not a progress record (or of another version) is an error naming `what`.
Result<SyncProgress> parse_progress(std::string_view text, std::string_view what);

struct LoadedProgress {
  SyncProgress progress;
  std::string set_aside;  // where an unreadable record was moved ("" when none was)
  std::string problem;    // why it was set aside, one line naming the file
};

// A missing file is an empty record. A file that is not a progress record (truncated, corrupt, of
// another version, too large) is renamed to "<path>.bad-<UTC time>[-N]" (never deleted: nothing
// recorded is lost) and an empty record is returned with `set_aside` and `problem` saying so. Only
// a file that can be neither read nor moved is an error.
Result<LoadedProgress> load_progress(const std::string& path);

// The name an unreadable record at `path` is moved to at `unix_seconds`, attempt `n` (0: no suffix).
std::string set_aside_name(const std::string& path, int64_t unix_seconds, int n);

// Atomically replaces the file (creating its folder when missing).
Status save_progress(const std::string& path, const SyncProgress& progress);

// Where the progress about `server_url` is kept by default: <root>/.scaleprof-sync/<host>_<port>.json.
// Beside the runs (a resumed sync from another login node finds it), in a hidden folder that readers
// of run directories skip; the recorded files themselves are never written.
std::string default_progress_path(const std::string& root, const std::string& server_url);

}  // namespace scaleprof::mlflow_sync
