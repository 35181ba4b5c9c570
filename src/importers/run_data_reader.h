// Readers of the scalability report's inputs. They fill ScalabilityData and format nothing.
//
// Under --root the layouts are detected automatically, folder by folder:
//  * scaleprof run directories (docs/run-directory.md): <root>/<experiment>/<run>/ with run.json
//    and/or rank-NNNNN/ folders (a root that is itself an experiment or a run works too), each read
//    with collect's reader (collect/run_reader.h), so the format has one reader;
//  * itwinai's CSV layout (v0.2.5 - v0.3.3): a folder holding epoch-time/, gpu-energy-data/,
//    computation-data/ (or the older communication-data/), either the root itself or one folder per
//    run id below it.
// Missing pieces are warnings; rejected data (bad numbers, missing columns, contradicting files) are
// errors naming the file and line, and the rest is still read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "importers/run_data.h"

namespace scaleprof::importers {

struct ScalabilityReadOptions {
  std::string root = "scalability-metrics";
  std::string experiment;              // only this experiment (scaleprof layout); empty: all
  std::vector<std::string> run_names;  // only these runs (folder or run.json name; itwinai: run id)
  // itwinai's epoch-time files give nodes, not GPUs; workers = nodes x this (itwinai's plots assume 4).
  int64_t gpus_per_node = 4;
};

// Fails only when the root cannot be listed. A root with no data at all gives an empty run list.
Result<ScalabilityData> read_scalability_data(const ScalabilityReadOptions& options);

}  // namespace scaleprof::importers
