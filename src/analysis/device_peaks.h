// Dense peak FLOP/s of the accelerators MFU is measured against, by dtype, from the vendors'
// datasheets (docs/flops.md lists each figure with its source). Dense, not the "with sparsity"
// figures the datasheets print first (twice the dense ones).
//
// fp32 is the plain (non tensor core) FP32 peak: Kineto's `Input type` says "float" whether or not
// the call ran on TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32, off by default for
// matmuls, on by default for cuDNN convolutions); a call whose kernel's name says TF32 is counted
// against the TF32 peak instead (flops.h); `--peak-tflops` sets one peak for all.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "analysis/flop_formulas.h"

namespace scaleprof::analysis {

struct DevicePeak {
  std::string_view name;  // the table's name, also what --device accepts
  // TFLOP/s by FlopDtype (fp32, fp64, fp16, bf16, fp8, int8 (TOPS), other, tf32); 0 where the
  // device has no such peak (fp8 on A100).
  double tflops[kFlopDtypeCount];
  std::string_view source;  // datasheet the numbers come from
};

std::span<const DevicePeak> device_peaks();
// The table's device for a device name: the trace's deviceProperties name ("NVIDIA H100 80GB HBM3",
// "NVIDIA A100-SXM4-40GB", "AMD Instinct MI300X") or a table name; case-insensitive; nullptr if none.
const DevicePeak* find_device_peak(std::string_view device_name);

}  // namespace scaleprof::analysis
