// DeepSpeed's flops profiler output (trace/deepspeed_profile.h) on a text written by hand in the
// format DeepSpeed 0.19.8 prints, with known values; bad input as one-line errors naming file and
// line; the trace side per nn.Module (analysis/module_flops.h) and the pairing of the two
// (analysis/deepspeed_compare.h) on a small trace read by the real reader.
#include <gtest/gtest.h>

#include <string>

#include "analysis/deepspeed_compare.h"
#include "analysis/module_flops.h"
#include "engine/rank_results_store.h"
#include "trace/deepspeed_profile.h"
#include "trace/kineto_reader.h"

namespace scaleprof {
namespace {

// A model Sequential(Linear(64, 128), ReLU, Block(fc: Linear(128, 128), act: ReLU),
// ModuleList(2 x Linear(128, 128))) over a [32, 64] input, two forward passes, as print_model_profile
// writes it (DeepSpeed 0.19.8, standalone: no engine lines). The figures are chosen by hand:
// Linear(64, 128): 8,320 params, 2 x 32*64*128 = 524,288 MACs.
constexpr const char* kProfile = R"(
-------------------------- DeepSpeed Flops Profiler --------------------------
Profile Summary at step 2:
Notations:
data parallel size (dp_size), model parallel size(mp_size),
number of parameters (params), number of multiply-accumulate operations(MACs),
number of floating-point operations (flops), floating-point operations per second (FLOPS),
fwd latency (forward propagation latency), bwd latency (backward propagation latency),
step (weights update latency), iter latency (sum of fwd, bwd and step latency)

params per GPU:                                                         57.34 K 
params of model = params per GPU * mp_size:                             0       
fwd MACs per GPU:                                                       3.67 MMACs
fwd flops per GPU:                                                      7.36 M  
fwd flops of model = fwd flops per GPU * mp_size:                       7.36 M  
fwd latency:                                                            2 ms    
fwd FLOPS per GPU = fwd flops per GPU / fwd latency:                    3.68 GFLOPS

----------------------------- Aggregated Profile per GPU -----------------------------
Top 1 modules in terms of params, MACs or fwd latency at different model depths:
depth 0:
    params      - {'Sequential': '57.34 K'}
    MACs        - {'Sequential': '3.67 MMACs'}
    fwd latency - {'Sequential': '2 ms'}

------------------------------ Detailed Profile per GPU ------------------------------
Each module profile is listed after its name in the following order: 
params, percentage of total params, MACs, percentage of total MACs, fwd latency, percentage of total fwd latency, fwd FLOPS

Note: 1. A module can have torch.nn.module or torch.nn.functional to compute logits (e.g. CrossEntropyLoss). They are not counted as submodules, thus not to be printed out. However they make up the difference between a parent's MACs (or latency) and the sum of its submodules'.
2. Number of floating-point operations is a theoretical estimation, thus FLOPS computed using that could be larger than the maximum system throughput.
3. The fwd latency listed in the top module's profile is directly captured at the module forward function in PyTorch, thus it's less than the fwd latency shown above which is captured in DeepSpeed.

Sequential(
  57.34 K = 100% Params, 3.67 MMACs = 100% MACs, 2 ms = 100% latency, 3.68 GFLOPS
  (0): Linear(8.32 K = 14.51% Params, 524.29 KMACs = 14.29% MACs, 500 us = 25% latency, 2.1 GFLOPS, in_features=64, out_features=128, bias=True)
  (1): ReLU(0 = 0% Params, 0 MACs = 0% MACs, 100 us = 5% latency, 81.92 MFLOPS)
  (2): Block(
    16.51 K = 28.8% Params, 1.05 MMACs = 28.57% MACs, 400 us = 20% latency, 5.26 GFLOPS
    (fc): Linear(16.51 K = 28.8% Params, 1.05 MMACs = 28.57% MACs, 300 us = 15% latency, 6.99 GFLOPS, in_features=128, out_features=128, bias=True)
    (act): ReLU(0 = 0% Params, 0 MACs = 0% MACs, 50 us = 2.5% latency, 163.84 MFLOPS)
  )
  (3): ModuleList(
    (0-1): 2 x Linear(16.51 K = 28.8% Params, 1.05 MMACs = 28.57% MACs, 250 us = 12.5% latency, 8.39 GFLOPS, in_features=128, out_features=128, bias=True)
  )
)
------------------------------------------------------------------------------
)";

TEST(DeepSpeedProfile, ReadsSummaryAndTree) {
  auto parsed = trace::parse_deepspeed_profile(kProfile, "ds.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  const trace::DsProfile& p = parsed.value();
  EXPECT_EQ(p.profile_step, 2);
  EXPECT_DOUBLE_EQ(p.params.value, 57340);
  EXPECT_DOUBLE_EQ(p.params.rounding, 5);  // two decimals of K
  EXPECT_DOUBLE_EQ(p.fwd_macs.value, 3.67e6);
  EXPECT_DOUBLE_EQ(p.fwd_flops.value, 7.36e6);
  EXPECT_DOUBLE_EQ(p.fwd_flops.rounding, 5000);
  EXPECT_DOUBLE_EQ(p.fwd_latency_s.value, 2e-3);
  EXPECT_FALSE(p.world_size);
  ASSERT_EQ(p.modules.size(), 8u);
  EXPECT_EQ(p.module_count, 9);  // the folded run stands for two
  EXPECT_EQ(p.modules[0].cls, "Sequential");
  EXPECT_EQ(trace::ds_module_path(p, 0), "");
  EXPECT_EQ(p.modules[1].cls, "Linear");
  EXPECT_EQ(trace::ds_module_path(p, 1), "0");
  EXPECT_DOUBLE_EQ(p.modules[1].params.value, 8320);
  EXPECT_DOUBLE_EQ(p.modules[1].macs.value, 524290);
  EXPECT_DOUBLE_EQ(p.modules[1].latency_s.value, 500e-6);
  EXPECT_DOUBLE_EQ(p.modules[1].flops_per_s.value, 2.1e9);
  // FLOPs: FLOP/s x latency = 1.05e6, within 0.005e9 x 500e-6 + 2.1e9 x 0.005e-6 (+ the product).
  EXPECT_DOUBLE_EQ(p.modules[1].flops().value, 2.1e9 * 500e-6);
  EXPECT_NEAR(p.modules[1].flops().rounding, 0.005e9 * 500e-6 + 2.1e9 * 0.005e-6 + 0.005e9 * 0.005e-6, 1e-6);
  EXPECT_EQ(trace::ds_module_path(p, 4), "2.fc");
  EXPECT_EQ(p.modules[4].depth, 2);
  EXPECT_EQ(p.modules[6].cls, "ModuleList");
  EXPECT_FALSE(p.modules[6].has_figures);  // ModuleList's repr prints no figures of its own
  EXPECT_EQ(trace::ds_module_path(p, 7), "3.0-1");
  EXPECT_EQ(p.modules[7].repeat, 2);
  EXPECT_EQ(p.modules[7].parent, 6);
}

TEST(DeepSpeedProfile, EngineLinesAndNoTree) {
  const std::string text =
      "-------------------------- DeepSpeed Flops Profiler --------------------------\n"
      "Profile Summary at step 10:\nNotations:\nx\n\n"
      "world size:                                                             4       \n"
      "data parallel size:                                                     4       \n"
      "model parallel size:                                                    1       \n"
      "batch size per GPU:                                                     8       \n"
      "params per GPU:                                                         1.2 B\n"
      "fwd MACs per GPU:                                                       3 TMACs\n"
      "fwd flops per GPU:                                                      6 T     \n"
      "fwd latency:                                                            1.5 s   \n"
      "bwd latency:                                                            3 s     \n"
      "samples/second:                                                         12.5    \n"
      "\n----------------------------- Aggregated Profile per GPU -----------------------------\n"
      "Top 1 modules in terms of params, MACs or fwd latency at different model depths:\n"
      "------------------------------------------------------------------------------\n";
  auto parsed = trace::parse_deepspeed_profile(text, "e.txt");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ(parsed.value().world_size, 4);
  EXPECT_EQ(parsed.value().batch_size_per_gpu, 8);
  EXPECT_DOUBLE_EQ(parsed.value().params.value, 1.2e9);  // "B" is DeepSpeed's G for parameters
  EXPECT_DOUBLE_EQ(parsed.value().fwd_flops.value, 6e12);
  ASSERT_TRUE(parsed.value().bwd_latency_s);
  EXPECT_DOUBLE_EQ(parsed.value().bwd_latency_s->value, 3);
  EXPECT_TRUE(parsed.value().modules.empty());
}

TEST(DeepSpeedProfile, BadInputIsOneLineNamingFileAndLine) {
  const std::string good = kProfile;
  auto error_of = [](const std::string& text) {
    auto r = trace::parse_deepspeed_profile(text, "ds.txt");
    EXPECT_FALSE(r);
    return r ? std::string() : r.error().message;
  };
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_EQ(error_of(""), "ds.txt: empty; not a DeepSpeed flops profile");
  EXPECT_EQ(error_of("{\"traceEvents\": []}"),
            "ds.txt:1: not a DeepSpeed flops profile: expected its banner, '---- DeepSpeed Flops Profiler ----'");
  // Line numbers count kProfile's blank first line: its banner is line 2, the root module line 34.
  EXPECT_EQ(error_of(replace("3.67 MMACs\n", "3.67 MFLOPS\n")),
            "ds.txt:13: 'fwd MACs per GPU': '3.67 MFLOPS' is not a figure as DeepSpeed prints it");
  EXPECT_EQ(error_of(replace("fwd flops per GPU:     ", "fwd flopz per GPU:     ")),
            "ds.txt:18: the summary lacks fwd flops per GPU");
  EXPECT_EQ(error_of(replace("500 us = 25% latency", "500 us = 25% latenzy")).substr(0, 56),
            "ds.txt:36: expected the module's figures (P = x% Params,");
  EXPECT_EQ(error_of(replace("    (act): ReLU", "      (act): ReLU")).substr(0, 41),
            "ds.txt:41: expected a line indented by 4 ");
  EXPECT_EQ(error_of(replace("\n  )\n)\n---", "\n  )\n---")),
            "ds.txt:46: expected a line indented by 2 (inside the module of line 34), got "
            "'------------------------------------------------------------...'");
  EXPECT_EQ(error_of(good + "more\n"), "ds.txt:48: text after the profile's closing rule: 'more'");
  EXPECT_EQ(error_of(replace("1.05 MMACs = 28.57% MACs, 300", "1e999 MMACs = 28.57% MACs, 300")).substr(0, 17),
            "ds.txt:40: expect");
  EXPECT_EQ(error_of(good.substr(0, good.find("  (3): ModuleList"))),
            "ds.txt: the model tree ends before its closing ')' (module of line 34)");
  // Nesting past the bound: an error, not a deep stack.
  std::string deep = good.substr(0, good.find("Sequential(\n"));
  for (int d = 0; d <= trace::kMaxDsDepth + 1; ++d) deep += std::string(2 * d, ' ') + (d ? "(a): " : "") + "S(\n";
  EXPECT_NE(error_of(deep).find("modules nested deeper than 64"), std::string::npos);
  // Messages are one line whatever the input holds.
  EXPECT_EQ(error_of(replace("(fc): Linear", "(fc): Lin\x1b[2Jear")).find('\n'), std::string::npos);
}

trace::RankTrace read(const std::string& json) {
  simdjson::padded_string text(json);
  auto t = trace::parse_kineto_trace("t.json", text);
  EXPECT_TRUE(t) << (t ? "" : t.error().message);
  return std::move(t.value());
}

// One step of the model above on a CPU: nn.Module events (with_stack=True) around the aten calls,
// then a backward node with its mm outside every module.
constexpr const char* kTrace = R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#0", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Sequential_0", "pid": 1, "tid": 1, "ts": 10, "dur": 500},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_0", "pid": 1, "tid": 1, "ts": 20, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::linear", "pid": 1, "tid": 1, "ts": 21, "dur": 40,
   "args": {"Input Dims": [[32, 64], [128, 64], [128]], "Input type": ["float", "float", "float"]}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 22, "dur": 30,
   "args": {"Input Dims": [[128], [32, 64], [64, 128], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: ReLU_0", "pid": 1, "tid": 1, "ts": 80, "dur": 20},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 81, "dur": 10,
   "args": {"Input Dims": [[32, 128]], "Input type": ["float"]}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Block_0", "pid": 1, "tid": 1, "ts": 110, "dur": 100},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_1", "pid": 1, "tid": 1, "ts": 111, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 112, "dur": 30,
   "args": {"Input Dims": [[128], [32, 128], [128, 128], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: ReLU_1", "pid": 1, "tid": 1, "ts": 170, "dur": 20},
  {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 171, "dur": 10,
   "args": {"Input Dims": [[32, 128]], "Input type": ["float"]}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_2", "pid": 1, "tid": 1, "ts": 220, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 221, "dur": 30,
   "args": {"Input Dims": [[128], [32, 128], [128, 128], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_3", "pid": 1, "tid": 1, "ts": 280, "dur": 50},
  {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 1, "ts": 281, "dur": 30,
   "args": {"Input Dims": [[128], [32, 128], [128, 128], [], []], "Input type": ["float", "float", "float", "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "cpu_op", "name": "autograd::engine::evaluate_function: AddmmBackward0", "pid": 1, "tid": 1, "ts": 600, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 610, "dur": 50,
   "args": {"Input Dims": [[32, 128], [128, 128]], "Input type": ["float", "float"]}}
]})";

TEST(ModuleFlops, SumsCountedCallsPerModuleTree) {
  const trace::RankTrace t = read(kTrace);
  const analysis::ModuleFlops m = analysis::module_flops(t);
  const int64_t first = 2 * 32 * 64 * 128, square = 2 * 32 * 128 * 128, relu = 32 * 128;
  EXPECT_EQ(m.steps, 1);
  EXPECT_EQ(m.forward_flops, first + 3 * square + 2 * relu);  // the backward mm left out
  EXPECT_EQ(m.forward_compute_flops, first + 3 * square);
  EXPECT_EQ(m.all_flops, first + 4 * square + 2 * relu);
  ASSERT_EQ(m.modules.size(), 8u);
  EXPECT_EQ(m.modules[0].name, "Sequential_0");
  EXPECT_EQ(m.modules[0].flops, first + 3 * square + 2 * relu);
  EXPECT_EQ(m.modules[0].host_ns, 500'000);
  EXPECT_EQ(m.modules[3].name, "Block_0");
  EXPECT_EQ(m.modules[3].cls, "Block");
  EXPECT_EQ(m.modules[3].flops, square + relu);  // its submodules'
  EXPECT_EQ(m.modules[4].parent, 3);
  EXPECT_EQ(analysis::module_class("Foo_bar_12"), "Foo_bar");
  EXPECT_EQ(analysis::module_class("Foo_bar"), "Foo_bar");
}

TEST(DeepSpeedCompare, PairsModulesByClassAndOrder) {
  auto parsed = trace::parse_deepspeed_profile(kProfile, "ds.txt");
  ASSERT_TRUE(parsed);
  const trace::DsProfile& p = parsed.value();
  const analysis::ModuleFlops m = analysis::module_flops(read(kTrace));
  const analysis::DsComparison c = analysis::compare_with_deepspeed(p, m);
  ASSERT_EQ(c.root, 0);
  EXPECT_EQ(c.forwards, 1);
  EXPECT_TRUE(c.forwards_counted);
  EXPECT_EQ(c.trace_flops, m.modules[0].flops);
  ASSERT_EQ(c.modules.size(), p.modules.size());
  // (0) Linear: the first of three Linears on both sides, by order.
  EXPECT_EQ(c.modules[1].trace_name, "Linear_0");
  EXPECT_TRUE(c.modules[1].by_order);
  EXPECT_EQ(c.modules[1].flops, 2 * 32 * 64 * 128);
  // (2) Block: alone of its class, and its children below it.
  EXPECT_EQ(c.modules[3].trace_name, "Block_0");
  EXPECT_FALSE(c.modules[3].by_order);
  EXPECT_EQ(c.modules[4].trace_name, "Linear_1");
  EXPECT_FALSE(c.modules[4].by_order);
  // ModuleList: no call of its own; its folded two Linears take the parent's next two.
  EXPECT_TRUE(c.modules[6].container);
  EXPECT_EQ(c.modules[7].trace_name, "Linear_2");
  EXPECT_EQ(c.modules[7].instances, 2);
  EXPECT_EQ(c.modules[7].expected, 2);
  EXPECT_EQ(c.modules[7].flops, 2 * 2 * 32 * 128 * 128);
  EXPECT_EQ(c.modules[6].flops, c.modules[7].flops);
  // Without module events: the forward FLOPs, one forward per step.
  analysis::ModuleFlops bare = m;
  bare.modules.clear();
  const analysis::DsComparison b = analysis::compare_with_deepspeed(p, bare);
  EXPECT_EQ(b.root, -1);
  EXPECT_EQ(b.forwards, 1);
  EXPECT_FALSE(b.forwards_counted);
  EXPECT_EQ(b.trace_flops, m.forward_flops);
  EXPECT_EQ(b.modules[1].instances, 0);
}

TEST(ModuleFlops, ComesBackFromTheSpillingStore) {
  // A rank whose results are spilled keeps its module tree for the comparison.
  engine::RankResults r;
  r.rank = 3;
  r.flops.emplace();
  r.flops->modules = analysis::module_flops(read(kTrace));
  engine::RankResults back;
  ASSERT_TRUE(engine::decode_rank_results(engine::encode_rank_results(r), &back));
  ASSERT_TRUE(back.flops && back.flops->modules);
  const analysis::ModuleFlops& a = *r.flops->modules;
  const analysis::ModuleFlops& b = *back.flops->modules;
  ASSERT_EQ(b.modules.size(), a.modules.size());
  for (size_t i = 0; i < a.modules.size(); ++i) {
    EXPECT_EQ(b.modules[i].name, a.modules[i].name);
    EXPECT_EQ(b.modules[i].cls, a.modules[i].cls);
    EXPECT_EQ(b.modules[i].parent, a.modules[i].parent);
    EXPECT_EQ(b.modules[i].depth, a.modules[i].depth);
    EXPECT_EQ(b.modules[i].calls, a.modules[i].calls);
    EXPECT_EQ(b.modules[i].flops, a.modules[i].flops);
    EXPECT_EQ(b.modules[i].host_ns, a.modules[i].host_ns);
  }
  EXPECT_EQ(b.forward_flops, a.forward_flops);
  EXPECT_EQ(b.all_flops, a.all_flops);
  EXPECT_EQ(b.steps, a.steps);
}

}  // namespace
}  // namespace scaleprof
