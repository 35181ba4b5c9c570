#include "analysis/device_peaks.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace scaleprof::analysis {

namespace {

// {fp32, fp64, fp16, bf16, fp8, int8, other, tf32}, source. Dense figures (sparse / 2).
constexpr std::array<DevicePeak, 10> kPeaks = {{
    {"A100", {19.5, 9.7, 312, 312, 0, 624, 0, 156}, "NVIDIA A100 Tensor Core GPU datasheet (SXM4 and PCIe)"},
    {"H100 SXM", {67, 34, 989.4, 989.4, 1978.9, 1978.9, 0, 494.7}, "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM"},
    {"H100 PCIe", {51, 26, 756, 756, 1513, 1513, 0, 378}, "NVIDIA H100 Tensor Core GPU datasheet, H100 PCIe"},
    {"H200", {67, 34, 989.4, 989.4, 1978.9, 1978.9, 0, 494.7}, "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM"},
    {"L40S", {91.6, 0, 362.05, 362.05, 733, 733, 0, 183}, "NVIDIA L40S GPU datasheet"},
    {"V100 SXM2", {15.7, 7.8, 125, 0, 0, 0, 0, 0}, "NVIDIA Tesla V100 GPU datasheet, V100 SXM2"},
    {"MI250X", {95.7, 95.7, 383, 383, 0, 383, 0, 0}, "AMD Instinct MI250X accelerator datasheet (FP32/FP64 matrix)"},
    {"MI250",
     {90.5, 90.5, 362.1, 362.1, 0, 362.1, 0, 0},
     "AMD Instinct MI250 accelerator datasheet (FP32/FP64 matrix)"},
    {"MI300X", {163.4, 163.4, 1307.4, 1307.4, 2614.9, 2614.9, 0, 653.7}, "AMD Instinct MI300X accelerator datasheet"},
    {"MI325X", {163.4, 163.4, 1307.4, 1307.4, 2614.9, 2614.9, 0, 653.7}, "AMD Instinct MI325X accelerator datasheet"},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

const DevicePeak* named(std::string_view name) {
  for (const DevicePeak& p : kPeaks) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

}  // namespace

std::span<const DevicePeak> device_peaks() {
  return kPeaks;
}

const DevicePeak* find_device_peak(std::string_view device_name) {
  const std::string n = lower(device_name);
  for (const DevicePeak& p : kPeaks) {
    if (lower(p.name) == n) return &p;
  }
  auto has = [&](std::string_view part) { return n.find(part) != std::string::npos; };
  // Most specific first: "MI250X" before "MI250", the PCIe H100 before the SXM one. An H100 NVL has
  // figures of its own, not in the table.
  if (has("h100")) {
    if (has("nvl")) return nullptr;
    return named(has("pcie") ? "H100 PCIe" : "H100 SXM");
  }
  if (has("h200")) return has("nvl") ? nullptr : named("H200");
  if (has("a100")) return named("A100");
  if (has("l40s")) return named("L40S");
  if (has("v100")) return has("pcie") ? nullptr : named("V100 SXM2");
  if (has("mi250x")) return named("MI250X");
  if (has("mi250")) return named("MI250");
  if (has("mi300x")) return named("MI300X");
  if (has("mi325x")) return named("MI325X");
  return nullptr;
}

}  // namespace scaleprof::analysis
