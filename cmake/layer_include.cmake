# The compile half of the layer order (docs/architecture.md, "Layers"; the script half is
# tools/check_layers.py). Sources include headers as "<layer>/<file>.h". With src/ itself as the
# include root every layer could include every other one, so each layer gets a root of its own
# instead, in the build tree, that holds one entry: a link named <layer> to src/<layer>/.
#
#   ${CMAKE_BINARY_DIR}/layer-include/analysis/analysis -> src/analysis
#
# Added PUBLIC to the layer's library, the root reaches exactly the targets that link the layer, so a
# source sees its own layer and the layers its target links (directly or through the layers below),
# and "report/table.h" from src/analysis/ stops the compile: report/table.h: No such file or
# directory. tests/CMakeLists.txt (layer_compile_*) plants such includes and expects that failure.
#
# A link, not a copy: an edited header is the one compiled, and the compiler's dependency files name
# the link, whose time stamp is the header's. Errors in a header therefore name it under
# layer-include/<layer>/<layer>/ (clang-tidy's HeaderFilterRegex admits that path like src/).
set(SCALEPROF_LAYER_INCLUDE ${CMAKE_BINARY_DIR}/layer-include)

# scaleprof_layer_include(<target> <layer> PUBLIC|PRIVATE): the include root of src/<layer>/ on <target>.
function(scaleprof_layer_include target layer scope)
  set(root ${SCALEPROF_LAYER_INCLUDE}/${layer})
  file(MAKE_DIRECTORY ${root})
  # Replaces the link of an earlier configure (a checkout moved since points it to the new src/).
  file(CREATE_LINK ${SCALEPROF_SRC}/${layer} ${root}/${layer} SYMBOLIC)
  target_include_directories(${target} ${scope} ${root})
endfunction()
