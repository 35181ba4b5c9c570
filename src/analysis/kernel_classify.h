// Kernel types: what a piece of device work spends the device on.
//
// The rules follow HTA HEAD's get_kernel_type (communication first, then memory, then computation
// unless the name is on HTA's "not computation" list), with the deliberate differences listed in
// docs/differences-from-hta.md:
//  * NCCL/RCCL names are recognised case-insensitively, including ncclDevKernel_* and names that
//    only contain ncclKernel/ncclDevKernel (HTA: case-sensitive; lowercase names were computation).
//  * A name starting with "hip" is NOT communication. hipMemcpy*/hipMemset* are memory, other hip*
//    device work is computation (HTA's `^hip` pattern made every AMD kernel and copy communication).
//  * classify_device_event() also looks at the category: sync records are OTHER and gpu_memcpy /
//    gpu_memset events are MEMORY whatever their names.
#pragma once

#include <cstdint>
#include <string_view>

#include "trace/category.h"

namespace scaleprof::analysis {

enum class KernelType : uint8_t { kComputation, kCommunication, kMemory, kOther };
inline constexpr int kKernelTypeCount = 4;

// HTA's names: "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER".
std::string_view kernel_type_name(KernelType type);

// The type of a device event from its name alone.
KernelType classify_kernel_name(std::string_view name);

// The type of a device event from its category and name (sync records are always OTHER, copies
// and sets always MEMORY).
KernelType classify_device_event(trace::Category category, std::string_view name);

}  // namespace scaleprof::analysis
