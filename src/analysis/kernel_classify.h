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
#include <vector>

#include "trace/category.h"
#include "trace/string_pool.h"

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

// classify_kernel_name by name id, each distinct name classified once: a trace repeats a few
// thousand kernel names millions of times, and classifying every event (the NCCL test searches the
// whole name) was a quarter of the CPU time of `trace summary` on a 400 MB trace.
class KernelNameTypes {
 public:
  explicit KernelNameTypes(const trace::StringPool& strings) : strings_(strings), types_(strings.size(), kUnset) {}
  KernelType of(trace::StringId name) {
    uint8_t& type = types_[name];
    if (type == kUnset) type = static_cast<uint8_t>(classify_kernel_name(strings_.view(name)));
    return static_cast<KernelType>(type);
  }

 private:
  static constexpr uint8_t kUnset = 0xFF;
  const trace::StringPool& strings_;
  std::vector<uint8_t> types_;  // by name id; kUnset until asked
};

}  // namespace scaleprof::analysis
