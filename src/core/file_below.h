// Reading files below a folder the user pointed at (an MLflow run folder, an artifact folder) without
// following symbolic links below it: everything under such a folder may have been written by someone
// else (a shared project space), and a planted `params/strategy -> ~colleague/.netrc` or `params ->
// /` must neither put another file's text into a report nor make the reader walk a whole disk.
//
// The folder itself (`base`) is opened as given, links included (/home -> /gpfs/home is normal);
// every component of the path below it is opened with O_NOFOLLOW relative to the one before
// (openat), so a link anywhere below `base`, or one swapped in while reading, is refused, never
// followed. Files are opened with O_NONBLOCK (a FIFO cannot block the reader) and must be regular.
// Every read is capped: a larger file is an error naming it, never a giant allocation.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace scaleprof {

// The text of the regular file `relative` ('/'-separated, no "..", not absolute) below `base`.
// Empty optional: nothing is there (or `base` does not exist). Errors name the file: a symbolic
// link below `base`, not a regular file, larger than `max_bytes`, unreadable.
Result<std::optional<std::string>> read_file_below(const std::string& base, std::string_view relative,
                                                   size_t max_bytes);

struct FolderEntry {
  std::string name;
  enum class Kind { kFile, kFolder, kSymlink, kOther } kind = Kind::kOther;  // as lstat says
};

// The entries of the folder `relative` below `base` ("" for `base` itself), sorted by name, without
// "." and "..", each with its own type (links are reported as links, never followed). Empty optional:
// no such folder. Errors name the folder: a symbolic link below `base`, unreadable, or more than
// `max_entries` entries.
Result<std::optional<std::vector<FolderEntry>>> list_folder_below(const std::string& base, std::string_view relative,
                                                                  size_t max_entries);

// Whether `relative` is a path read_file_below accepts: not empty, not absolute, no "." or ".."
// component, no empty component.
bool is_plain_relative_path(std::string_view relative);

}  // namespace scaleprof
