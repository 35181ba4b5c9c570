// Whether a script or result file of `scaleprof slurm` (and `slurm analyze`) may be written at a path:
// the one check both use before anything is written, so that a planted link or a folder in the way
// is refused the same way everywhere.
#pragma once

#include <string>
#include <string_view>

namespace scaleprof::launch {

// Why `path` may not be written, or "" when it may: a missing path may; an existing regular file
// only with `force`; a symbolic link (dangling or not), a folder or anything else never. An existing
// file without `force` is "<path> exists already<if_exists>" (e.g. "; --force replaces it").
std::string write_refusal(const std::string& path, bool force, std::string_view if_exists);

}  // namespace scaleprof::launch
