// libFuzzer target for itwinai's CSV layout: the input, cut at "\n===\n", becomes the epoch-time,
// gpu-energy-data and computation-data files of one itwinai folder; the CSV parser also gets the
// whole input directly. Whatever the bytes: no crash, no hang, no runaway allocation, valid JSON.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "importers/csv.h"
#include "report_fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<scaleprof::Diagnostic> warnings;
  std::vector<scaleprof::Diagnostic> errors;
  for (bool appended : {false, true}) {
    const scaleprof::importers::CsvFile csv =
        scaleprof::importers::parse_csv(input, "fuzz.csv", appended, &warnings, &errors);
    for (size_t i = 0; i < csv.rows.size(); ++i) {
      if (csv.rows[i].size() != csv.header.size() || csv.lines[i] < 1) __builtin_trap();
    }
  }
  const scaleprof::fuzzing::ScratchRoot root;
  if (!root.ok()) return 0;
  const std::vector<std::string_view> parts = scaleprof::fuzzing::split_parts(input, 3);
  root.write("epoch-time/epochtime_ddp_1N.csv", parts[0]);
  root.write("gpu-energy-data/ddp_4.csv", parts[1]);
  root.write("computation-data/ddp_4_0.csv", parts[2]);
  scaleprof::fuzzing::report_everything(root.path(), 4);
  return 0;
}
