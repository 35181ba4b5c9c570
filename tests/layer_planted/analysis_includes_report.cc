// Planted for the layer_compile_* tests (tests/CMakeLists.txt): analysis including report, a layer
// above it. The first include (tables, below analysis) must be found; the second must stop the compile.
#include "tables/epoch_time.h"

#include "report/gnuplot_script.h"
