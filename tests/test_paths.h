#pragma once

// Where the unit tests find the CLI this build made, the stand-in GPU libraries, the checkout and
// ../shared. The paths are defined once, in a source file the build generates (tests/CMakeLists.txt),
// not on every test's compile line: a compile line naming the clone's absolute paths made every test
// object a ccache miss in each fresh clone (CI compiles from one).
namespace scaleprof::test_paths {
extern const char* const kCli;
extern const char* const kSharedDir;
extern const char* const kSourceDir;
extern const char* const kFakeNvml;
extern const char* const kFakeRocmSmi;
}  // namespace scaleprof::test_paths

#define SCALEPROF_CLI_PATH (::scaleprof::test_paths::kCli)
#define SCALEPROF_SHARED_DIR (::scaleprof::test_paths::kSharedDir)
#define SCALEPROF_SOURCE_DIR (::scaleprof::test_paths::kSourceDir)
#define SCALEPROF_FAKE_NVML_PATH (::scaleprof::test_paths::kFakeNvml)
#define SCALEPROF_FAKE_ROCM_SMI_PATH (::scaleprof::test_paths::kFakeRocmSmi)
