#include "analysis/kernel_classify.h"

#include <algorithm>

namespace scaleprof::analysis {

namespace {

// ASCII only, as std::tolower in the "C" locale the CLI runs in, without its call per byte (the
// needles are ASCII, so other bytes never match them whatever their case).
char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (lower(s[i]) != prefix[i]) return false;
  }
  return true;
}

// `needle` must be lowercase.
bool contains_ci(std::string_view s, std::string_view needle) {
  auto it = std::search(s.begin(), s.end(), needle.begin(), needle.end(), [](char a, char b) { return lower(a) == b; });
  return it != s.end();
}

bool contains(std::string_view s, std::string_view needle) {
  return s.find(needle) != std::string_view::npos;
}

bool is_communication(std::string_view name) {
  // NCCL kernels: ncclKernel_*, ncclDevKernel_* (NCCL >= 2.19), and lowercase spellings seen in
  // the wild (HTA issue #247). RCCL keeps NCCL's kernel names; "rccl" covers its own prefixes.
  return starts_with_ci(name, "nccl") || starts_with_ci(name, "rccl") || starts_with_ci(name, "hccl") ||
         contains_ci(name, "ncclkernel") || contains_ci(name, "nccldevkernel");
}

bool is_memory(std::string_view name) {
  return name.starts_with("Memcpy") || name.starts_with("Memset") || name.starts_with("hipMemcpy") ||
         name.starts_with("hipMemset") || name.starts_with("dma");
}

// HTA's list of names that are device events but not computation: copies and sets not caught
// above, sync records, launch API names, and MTIA scheduler events.
bool is_not_computation(std::string_view name) {
  if (contains(name, "Memcpy") || contains(name, "Memset") || contains(name, "dma") || contains(name, "Sync")) {
    return true;
  }
  if (name.starts_with("Stream Wait Event") || name.starts_with("runFunction") || name.starts_with("job_exe") ||
      name.starts_with("packet") || name.starts_with("pe_exe") || name.starts_with("cpum_exe_subgraph") ||
      name.starts_with("collective_subgraph_execution")) {
    return true;
  }
  // cuda.*LaunchKernel
  size_t cuda = name.find("cuda");
  return cuda != std::string_view::npos && name.find("LaunchKernel", cuda + 4) != std::string_view::npos;
}

}  // namespace

std::string_view kernel_type_name(KernelType type) {
  switch (type) {
    case KernelType::kComputation:
      return "COMPUTATION";
    case KernelType::kCommunication:
      return "COMMUNICATION";
    case KernelType::kMemory:
      return "MEMORY";
    case KernelType::kOther:
      return "OTHER";
  }
  return "OTHER";
}

KernelType classify_kernel_name(std::string_view name) {
  if (is_communication(name)) return KernelType::kCommunication;
  if (is_memory(name)) return KernelType::kMemory;
  if (is_not_computation(name)) return KernelType::kOther;
  return KernelType::kComputation;
}

KernelType classify_device_event(trace::Category category, std::string_view name) {
  if (category == trace::Category::kCudaSync) return KernelType::kOther;
  if (category == trace::Category::kGpuMemcpy || category == trace::Category::kGpuMemset) {
    return KernelType::kMemory;
  }
  return classify_kernel_name(name);
}

}  // namespace scaleprof::analysis
