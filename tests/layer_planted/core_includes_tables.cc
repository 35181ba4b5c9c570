// Planted for the layer_compile_* tests (tests/CMakeLists.txt): core, the lowest layer, including a
// layer above it. The first include is allowed and must be found; the second must stop the compile.
#include "core/result.h"
#include "tables/epoch_time.h"
