// Planted for the layer_compile_* tests (tests/CMakeLists.txt): launch including analysis, which it
// links only through importers, privately. The first include (importers, which launch links) must be
// found; the second must stop the compile.
#include "importers/csv.h"

#include "analysis/intervals.h"
