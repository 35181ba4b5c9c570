// Reads an Nsight Systems export (`nsys export --type sqlite`) into the same RankTrace tables as a
// Kineto trace, so that every `scaleprof trace` analysis runs on it unchanged.
//
// What becomes what (docs/nsys.md has the full table and the reasons):
//  - CUPTI_ACTIVITY_KIND_KERNEL -> `kernel` rows (demangled name from StringIds; device, stream,
//    correlation id, grid, block, registers, static + dynamic shared memory); NCCL kernels are
//    communication by name, as in Kineto traces (analysis/kernel_classify.h);
//  - CUPTI_ACTIVITY_KIND_MEMCPY / MEMSET -> `gpu_memcpy` / `gpu_memset` rows named as Kineto names
//    them ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)"), with their bytes;
//  - CUPTI_ACTIVITY_KIND_RUNTIME -> `cuda_runtime` rows (`cuda_driver` for the cu* driver calls),
//    names without nsys' version suffix (cudaLaunchKernel_v7000 -> cudaLaunchKernel), with the
//    correlation id that links each launch to its kernel;
//  - CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> `cuda_sync` rows ("Stream Sync", "Context Sync", ...);
//  - NVTX_EVENTS push/pop and start/end ranges -> `user_annotation` rows on their thread, so a range
//    named "ProfilerStep#N" is a step as in a Kineto trace; marks (no duration) are counted only.
// Times are nanoseconds since the session start in nsys; they are made absolute with
// TARGET_INFO_SESSION_START_TIME.utcEpochNs when the file has it (kept in metadata.base_time_ns),
// as the Kineto reader does with baseTimeNanoseconds, so two ranks' files share one clock.
// Host tracks are (pid, tid) from nsys' globalTid; device tracks (device, stream), as Kineto's.
//
// The file may be anything: it is opened with core/sqlite_read.h (read-only, schema not trusted,
// one deadline for every query on the file together); a file without StringIds is not an nsys
// export; a table read must be a real table with the columns read, else the file fails with one
// line naming it and the table. Each table is read with one plain scan (`NOT INDEXED`, no join, no
// WHERE), so no index or statistics in the file (a forged sqlite_stat1) choose how it is read:
// StringIds is read once into a table sorted by id and names are looked up there; an id that
// appears twice in StringIds fails the file (a join would have multiplied the rows naming it). A
// row with a bad value (NULL or non-integer times, end before start, times outside the reader's
// bounds, a name id that points nowhere) is skipped or kept with a placeholder name, counted, and
// named in one warning per table and reason.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "core/sqlite_read.h"
#include "trace/event_table.h"

namespace scaleprof::trace {

// Said after every message about a file that is not a readable nsys export.
inline constexpr std::string_view kNsysExportHint = "(is this an nsys export? nsys export --type sqlite)";

struct NsysReadOptions {
  // limits.query_deadline is the deadline of the whole file (limits.file_deadline, when set, instead).
  SqliteLimits limits;
};

// Reads the export at `path`. The rank is left at 0 (callers assign ranks from the file name or
// `--rank`, trace_set.h: nsys records no distributed rank).
Result<RankTrace> read_nsys_sqlite(const std::string& path, const NsysReadOptions& options = {});

}  // namespace scaleprof::trace
