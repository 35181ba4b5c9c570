// Planted for the layer_compile_* tests (tests/CMakeLists.txt): report including importers, a layer
// beside it that it does not link. The first include (engine, below report) must be found; the second
// must stop the compile.
#include "engine/partial_results.h"
#include "importers/csv.h"
