#include "analysis/kernel_classify.h"

#include <gtest/gtest.h>

namespace scaleprof::analysis {
namespace {

using trace::Category;

TEST(KernelClassify, NcclKernelsOfEveryGenerationAreCommunication) {
  EXPECT_EQ(classify_kernel_name("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"),
            KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("ncclDevKernel_Generic"), KernelType::kCommunication);
  // Lowercase spellings (HTA issue #247) and names that only contain the NCCL kernel name.
  EXPECT_EQ(classify_kernel_name("nccldevkernel_SendRecv"), KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("NCCL_AllGather"), KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("void ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*)"),
            KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*)"),
            KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("rcclGenericKernel"), KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("hcclAllReduce"), KernelType::kCommunication);
}

TEST(KernelClassify, HipNamesAreNotCommunication) {
  // HTA's `^hip` makes all of these communication.
  EXPECT_EQ(classify_kernel_name("hipMemcpyWithStream"), KernelType::kMemory);
  EXPECT_EQ(classify_kernel_name("hipMemcpyAsync"), KernelType::kMemory);
  EXPECT_EQ(classify_kernel_name("hipMemsetAsync"), KernelType::kMemory);
  EXPECT_EQ(classify_kernel_name("hipblasLt_gemm_kernel"), KernelType::kComputation);
  EXPECT_EQ(classify_kernel_name("hip_fused_adam_kernel"), KernelType::kComputation);
}

TEST(KernelClassify, CopiesAndSetsAreMemory) {
  EXPECT_EQ(classify_kernel_name("Memcpy DtoH (Device -> Pinned)"), KernelType::kMemory);
  EXPECT_EQ(classify_kernel_name("Memcpy HtoD (Pageable -> Device)"), KernelType::kMemory);
  EXPECT_EQ(classify_kernel_name("Memset (Device)"), KernelType::kMemory);
  EXPECT_EQ(classify_kernel_name("dma_transfer_0"), KernelType::kMemory);  // MTIA
  // Typed by category whatever the name says.
  EXPECT_EQ(classify_device_event(Category::kGpuMemcpy, "some copy"), KernelType::kMemory);
  EXPECT_EQ(classify_device_event(Category::kGpuMemset, "some set"), KernelType::kMemory);
}

TEST(KernelClassify, SyncRecordsAreOther) {
  for (const char* name : {"Stream Sync", "Context Sync", "Event Sync", "Stream Wait Event"}) {
    EXPECT_EQ(classify_kernel_name(name), KernelType::kOther) << name;
    EXPECT_EQ(classify_device_event(Category::kCudaSync, name), KernelType::kOther) << name;
  }
  EXPECT_EQ(classify_device_event(Category::kCudaSync, "volta_sgemm_128x64_nn"), KernelType::kOther);
}

TEST(KernelClassify, HtaNotComputationListIsOther) {
  EXPECT_EQ(classify_kernel_name("cudaLaunchKernel"), KernelType::kOther);
  EXPECT_EQ(classify_kernel_name("runFunction - job_prep_and_submit_for_execution"), KernelType::kOther);
  EXPECT_EQ(classify_kernel_name("job_exe_0"), KernelType::kOther);
  EXPECT_EQ(classify_kernel_name("void copy_with_Memcpy_in_name()"), KernelType::kOther);
}

TEST(KernelClassify, EverythingElseIsComputation) {
  EXPECT_EQ(classify_kernel_name("volta_sgemm_128x64_nn"), KernelType::kComputation);
  EXPECT_EQ(classify_kernel_name("triton_poi_fused_add_cos_sin_0"), KernelType::kComputation);
  EXPECT_EQ(classify_device_event(Category::kKernel, "void at::native::vectorized_elementwise_kernel<4>()"),
            KernelType::kComputation);
  EXPECT_EQ(classify_kernel_name(""), KernelType::kComputation);
}

TEST(KernelClassify, TypeNamesAreHtas) {
  EXPECT_EQ(kernel_type_name(KernelType::kComputation), "COMPUTATION");
  EXPECT_EQ(kernel_type_name(KernelType::kCommunication), "COMMUNICATION");
  EXPECT_EQ(kernel_type_name(KernelType::kMemory), "MEMORY");
  EXPECT_EQ(kernel_type_name(KernelType::kOther), "OTHER");
}

TEST(KernelClassify, NameTypesByIdAreThoseOfTheNames) {
  trace::StringPool strings;
  const trace::StringId nccl = strings.intern("void NcClDeVkErNeL_AllGather(ncclDevComm*)");
  const trace::StringId copy = strings.intern("Memcpy HtoD (Pageable -> Device)");
  const trace::StringId sync = strings.intern("cudaStreamSynchronize");
  const trace::StringId gemm = strings.intern("sm90_xmma_gemm_\xc3\x89NCCL");  // bytes past ASCII, uppercase NCCL
  KernelNameTypes types(strings);
  EXPECT_EQ(types.of(nccl), KernelType::kCommunication);
  EXPECT_EQ(types.of(copy), KernelType::kMemory);
  EXPECT_EQ(types.of(sync), KernelType::kOther);
  EXPECT_EQ(types.of(gemm), KernelType::kComputation);
  EXPECT_EQ(types.of(0), KernelType::kComputation);  // the empty name, as classify_kernel_name("")
  // Asked again: the type kept for the id.
  EXPECT_EQ(types.of(nccl), KernelType::kCommunication);
  EXPECT_EQ(types.of(gemm), KernelType::kComputation);
}

TEST(KernelClassify, CaseInsensitiveMatchingIsAsciiOnly) {
  // Letters of either case match the lowercase needles; other bytes only themselves.
  EXPECT_EQ(classify_kernel_name("xNCCLKERNELx"), KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("RcCl_Kernel"), KernelType::kCommunication);
  EXPECT_EQ(classify_kernel_name("n\xc3\x87"
                                 "clKernel"),
            KernelType::kComputation);
}

}  // namespace
}  // namespace scaleprof::analysis
