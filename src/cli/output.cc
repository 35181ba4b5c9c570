#include "cli/output.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace scaleprof::cli {

bool color_allowed(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd) != 0;
}

}  // namespace scaleprof::cli
