// DeepSpeed's flops profiler beside the trace's FLOPs of the same run (`scaleprof trace flops
// --deepspeed-profile FILE`, docs/flops.md "DeepSpeed's flops profiler"): each module of DeepSpeed's
// tree (trace/deepspeed_profile.h) paired with the trace's nn.Module calls (module_flops.h), and the
// totals on one basis, FLOPs per forward pass.
//
// Pairing. DeepSpeed's root is the trace module of the same class nearest the top (the most calls
// among several): a DeepSpeedEngine or DDP wrapper above the model is passed over. Below a paired
// module, its children are paired with the trace children of the same class, in order: DeepSpeed's in
// registration order, the trace's in the order first called, a folded run ("(0-11): 12 x Block")
// taking as many. A child alone of its class on both sides is paired by class; among several, by
// order, which is right when the model calls its children in the order it registers them (marked,
// since a model that calls them in another order gets them swapped). ModuleList and ModuleDict have
// no forward of their own (no trace event): their children are paired with their parent's trace
// children, and their row sums their children's.
//
// Basis. DeepSpeed's figures cover the forward passes between start_profile and the print: the
// DeepSpeed engine profiles one (the micro-batch of `profile_step`); the caller says how many
// (`ds_forwards`). The trace's are per call of the paired root in the window (module_flops.h), or,
// without module events, per ProfilerStep (one forward each assumed) over the calls outside backward,
// optimizer and data loading.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/module_flops.h"
#include "trace/deepspeed_profile.h"

namespace scaleprof::analysis {

struct DsModuleMatch {
  std::string trace_name;  // the first trace module paired ("Linear_1"), "" none
  int64_t instances = 0;   // trace modules paired with it
  int64_t expected = 0;    // trace modules it stands for (its repeat under each paired parent); 0: container
  bool by_order = false;   // paired among several of its class, by order
  bool container = false;  // ModuleList/ModuleDict: no call of its own, figures its children's
  int64_t calls = 0;
  int64_t flops = 0;  // unknown past int64
  int64_t host_ns = 0;
};

struct DsComparison {
  std::vector<DsModuleMatch> modules;  // one per DsProfile::modules, same order
  int64_t root = -1;                   // the trace module paired with DeepSpeed's root; -1 none
  int64_t forwards = 0;                // trace forward passes in the window (at least 1)
  bool forwards_counted = false;       // counted as the root's calls (else assumed: one per step)
  int64_t trace_flops = 0;             // the root's FLOPs, or the forward FLOPs without a root
  int64_t trace_host_ns = 0;           // the root's calls' time; 0 without a root
};

DsComparison compare_with_deepspeed(const trace::DsProfile& profile, const ModuleFlops& trace);

// Whether DeepSpeed's class is a container without a forward of its own.
bool is_forwardless_container(std::string_view cls);

}  // namespace scaleprof::analysis
