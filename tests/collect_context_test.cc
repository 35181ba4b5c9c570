// Rank, world, node and job detection from each launcher's environment, overrides, and run names.
#include <gtest/gtest.h>

#include "collect/run_context.h"
#include "collect/run_names.h"
#include "launch/wrapper.h"

namespace scaleprof::collect {
namespace {

RunContext detect(const Environment& env, const ContextOverrides& o = {}) {
  auto r = detect_run_context(env, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? r.value() : RunContext{};
}

TEST(RunContext, SingleProcessIsRankZeroOfOne) {
  RunContext c = detect(Environment{{"SCALEPROF_HOST", "h1"}});
  EXPECT_EQ(c.rank, 0);
  EXPECT_EQ(c.world_size, 1);
  EXPECT_EQ(c.nodes, 1);
  EXPECT_EQ(c.launcher, "single");
  EXPECT_EQ(c.host, "h1");
  EXPECT_EQ(c.root, "scalability-metrics");
  EXPECT_EQ(c.experiment, "default");
  EXPECT_EQ(c.run, "");
  EXPECT_EQ(c.gpu_monitor, "rank");
  EXPECT_FALSE(c.devices_restricted);
  EXPECT_FALSE(c.wrapper_pid.has_value());
}

TEST(RunContext, Torchrun) {
  RunContext c = detect(Environment{{"TORCHELASTIC_RUN_ID", "none"},
                                    {"RANK", "5"},
                                    {"LOCAL_RANK", "1"},
                                    {"WORLD_SIZE", "8"},
                                    {"LOCAL_WORLD_SIZE", "4"},
                                    {"GROUP_RANK", "1"},
                                    {"GROUP_WORLD_SIZE", "2"}});
  EXPECT_EQ(c.launcher, "torchrun");
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(c.local_rank, 1);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.nodes, 2);
}

TEST(RunContext, SlurmTasks) {
  RunContext c = detect(Environment{{"SLURM_PROCID", "6"},
                                    {"SLURM_LOCALID", "2"},
                                    {"SLURM_NTASKS", "16"},
                                    {"SLURM_NTASKS_PER_NODE", "4(x4)"},
                                    {"SLURM_NODEID", "1"},
                                    {"SLURM_NNODES", "4"},
                                    {"SLURM_JOB_ID", "123456"}});
  EXPECT_EQ(c.launcher, "slurm");
  EXPECT_EQ(c.rank, 6);
  EXPECT_EQ(c.local_rank, 2);
  EXPECT_EQ(c.world_size, 16);
  EXPECT_EQ(c.local_world_size, 4);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.job_id, "123456");
}

TEST(RunContext, TorchrunInsideSlurmTakesTorchrunRanksAndSlurmJob) {
  // srun starts one torchrun per node (SLURM_PROCID = node), torchrun starts the ranks.
  RunContext c = detect(Environment{{"SLURM_PROCID", "1"},
                                    {"SLURM_NTASKS", "2"},
                                    {"SLURM_NNODES", "2"},
                                    {"SLURM_NODEID", "1"},
                                    {"SLURM_JOB_ID", "77"},
                                    {"TORCHELASTIC_RUN_ID", "77"},
                                    {"RANK", "7"},
                                    {"LOCAL_RANK", "3"},
                                    {"WORLD_SIZE", "8"},
                                    {"LOCAL_WORLD_SIZE", "4"},
                                    {"GROUP_RANK", "1"}});
  EXPECT_EQ(c.launcher, "torchrun");
  EXPECT_EQ(c.rank, 7);
  EXPECT_EQ(c.world_size, 8);
  EXPECT_EQ(c.node_rank, 1);
  EXPECT_EQ(c.nodes, 2);  // GROUP_WORLD_SIZE missing: SLURM_NNODES fills it
  EXPECT_EQ(c.job_id, "77");
}

TEST(RunContext, OpenMpiHorovodPmiDeepSpeed) {
  RunContext ompi = detect(Environment{{"OMPI_COMM_WORLD_RANK", "3"},
                                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                       {"OMPI_COMM_WORLD_SIZE", "4"},
                                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  EXPECT_EQ(ompi.launcher, "openmpi");
  EXPECT_EQ(ompi.rank, 3);
  EXPECT_EQ(ompi.local_rank, 1);
  EXPECT_EQ(ompi.world_size, 4);
  EXPECT_EQ(ompi.local_world_size, 2);

  RunContext hvd = detect(Environment{{"HOROVOD_RANK", "2"},
                                      {"HOROVOD_LOCAL_RANK", "0"},
                                      {"HOROVOD_SIZE", "3"},
                                      {"HOROVOD_CROSS_RANK", "2"},
                                      {"HOROVOD_CROSS_SIZE", "3"},
                                      {"OMPI_COMM_WORLD_RANK", "0"}});
  EXPECT_EQ(hvd.launcher, "horovod");
  EXPECT_EQ(hvd.rank, 2);
  EXPECT_EQ(hvd.node_rank, 2);
  EXPECT_EQ(hvd.nodes, 3);

  RunContext pmi = detect(Environment{{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}});
  EXPECT_EQ(pmi.launcher, "pmi");
  EXPECT_EQ(pmi.rank, 1);
  EXPECT_EQ(pmi.local_rank, 1);
  EXPECT_EQ(pmi.world_size, 2);

  RunContext ds = detect(Environment{{"RANK", "4"},
                                     {"LOCAL_RANK", "0"},
                                     {"WORLD_SIZE", "8"},
                                     {"CROSS_RANK", "1"},
                                     {"CROSS_SIZE", "2"},
                                     {"LOCAL_SIZE", "4"}});
  EXPECT_EQ(ds.launcher, "deepspeed");
  EXPECT_EQ(ds.rank, 4);
  EXPECT_EQ(ds.node_rank, 1);
  EXPECT_EQ(ds.nodes, 2);
  EXPECT_EQ(ds.local_world_size, 4);
}

TEST(RunContext, ScaleprofVariablesAndOverridesWin) {
  Environment env{{"RANK", "1"},
                  {"WORLD_SIZE", "2"},
                  {"TORCHELASTIC_RUN_ID", "x"},
                  {"SCALEPROF_RANK", "3"},
                  {"SCALEPROF_WORLD_SIZE", "4"},
                  {"SCALEPROF_EXPERIMENT", "resnet"},
                  {"SCALEPROF_RUN", "r1"},
                  {"SCALEPROF_STRATEGY", "ddp"},
                  {"SCALEPROF_ROOT", "/tmp/m"},
                  {"SCALEPROF_GPU_MONITOR", "node"},
                  {"SCALEPROF_WRAPPER_PID", "4242"}};
  RunContext c = detect(env);
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.world_size, 4);
  EXPECT_EQ(c.launcher, "torchrun");  // SCALEPROF_* values are not a launcher
  EXPECT_EQ(c.experiment, "resnet");
  EXPECT_EQ(c.run, "r1");
  EXPECT_EQ(c.strategy, "ddp");
  EXPECT_EQ(c.root, "/tmp/m");
  EXPECT_EQ(c.gpu_monitor, "node");
  EXPECT_EQ(c.wrapper_pid, 4242);

  ContextOverrides o;
  o.rank = 0;
  o.world_size = 1;
  o.experiment = "vit";
  o.launcher = "custom";
  RunContext c2 = detect(env, o);
  EXPECT_EQ(c2.rank, 0);
  EXPECT_EQ(c2.world_size, 1);
  EXPECT_EQ(c2.experiment, "vit");
  EXPECT_EQ(c2.launcher, "custom");
}

TEST(RunContext, BadValuesAreErrorsNotZero) {
  auto bad = detect_run_context(Environment{{"TORCHELASTIC_RUN_ID", "a"}, {"RANK", "x1"}, {"WORLD_SIZE", "2"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "RANK='x1' is not a non-negative integer");
  auto too_big = detect_run_context(Environment{{"SLURM_PROCID", "4"}, {"SLURM_NTASKS", "4"}});
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.error().message, "rank 4 is not below the world size 4");
  auto mode = detect_run_context(Environment{{"SCALEPROF_GPU_MONITOR", "all"}});
  ASSERT_FALSE(mode.ok());
  EXPECT_NE(mode.error().message.find("'all'"), std::string::npos);
}

TEST(RunContext, VisibleDevices) {
  RunContext c = detect(Environment{{"CUDA_VISIBLE_DEVICES", "2,GPU-abc"}});
  EXPECT_TRUE(c.devices_restricted);
  EXPECT_EQ(c.visible_devices, (std::vector<std::string>{"2", "GPU-abc"}));
  RunContext none = detect(Environment{{"CUDA_VISIBLE_DEVICES", ""}});
  EXPECT_TRUE(none.devices_restricted);  // set but empty: no GPU at all
  EXPECT_TRUE(none.visible_devices.empty());
  RunContext amd = detect(Environment{{"ROCR_VISIBLE_DEVICES", "1"}});
  EXPECT_EQ(amd.visible_devices, (std::vector<std::string>{"1"}));
}

TEST(RunNames, DerivedFromSlurmStepOrRendezvous) {
  RunContext c;
  c.strategy = "ddp";
  c.world_size = 8;
  EXPECT_EQ(derived_run_name(c, Environment{{"SLURM_JOB_ID", "123"}, {"SLURM_STEP_ID", "2"}}), "ddp-w8-slurm123.2");
  // The batch step has no step id: two launches in one script would collide, so no name.
  EXPECT_EQ(derived_run_name(c, Environment{{"SLURM_JOB_ID", "123"}}), "");
  EXPECT_EQ(derived_run_name(c, Environment{{"TORCHELASTIC_RUN_ID", "none"}}), "");
  EXPECT_EQ(derived_run_name(c, Environment{{"TORCHELASTIC_RUN_ID", "job/7"}}), "ddp-w8-job_7");
  EXPECT_EQ(derived_run_name(c, Environment{{"TORCHELASTIC_RUN_ID", "j7"}, {"TORCHELASTIC_RESTART_COUNT", "2"}}),
            "ddp-w8-j7-r2");
}

TEST(RunNames, GeneratedNamesAreTimestampedAndDistinct) {
  // 2026-11-21 23:15:00 UTC
  const int64_t t = 1795302900LL * 1'000'000'000;
  EXPECT_EQ(generated_run_name("ddp", 4, t, 0x3f2a), "ddp-w4-20261121-231500-3f2a");
  EXPECT_EQ(generated_run_name("", 1, t, 0x1ffff), "run-w1-20261121-231500-ffff");
  EXPECT_NE(generated_run_name("ddp", 4, t, 1), generated_run_name("ddp", 4, t, 2));
}

TEST(RunNames, CheckName) {
  EXPECT_TRUE(check_name("run name", "ddp-w4_1.2+x").ok());
  EXPECT_EQ(check_name("experiment", "a/b").error().message,
            "experiment 'a/b' may only use letters, digits, '.', '_', '-' and '+' (it names a folder)");
  EXPECT_FALSE(check_name("run name", "..").ok());
  EXPECT_FALSE(check_name("run name", "").ok());
  EXPECT_FALSE(check_name("run name", std::string(129, 'a')).ok());
}

TEST(Wrapper, WorldSizeFromATorchrunCommandLine) {
  using V = std::vector<std::string>;
  EXPECT_EQ(launch::torchrun_world(V{"torchrun", "--nproc_per_node", "4", "train.py"}),
            std::make_pair(int64_t{4}, int64_t{1}));
  EXPECT_EQ(launch::torchrun_world(V{"/venv/bin/torchrun", "--nnodes=2", "--nproc-per-node=8", "t.py"}),
            std::make_pair(int64_t{16}, int64_t{2}));
  EXPECT_EQ(launch::torchrun_world(V{"python", "-m", "torch.distributed.run", "--nproc_per_node", "2", "t.py"}),
            std::make_pair(int64_t{2}, int64_t{1}));
  // The script's own --nproc_per_node after the script name is not torchrun's.
  EXPECT_EQ(launch::torchrun_world(V{"torchrun", "t.py", "--nproc_per_node", "3"}),
            std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(launch::torchrun_world(V{"torchrun", "--nproc_per_node", "gpu", "t.py"}),
            std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(launch::torchrun_world(V{"python", "train.py", "--nproc_per_node", "4"}),
            std::make_pair(int64_t{0}, int64_t{0}));
  // Elastic ranges (--nnodes 1:4) are not a fixed world.
  EXPECT_EQ(launch::torchrun_world(V{"torchrun", "--nnodes", "1:4", "--nproc_per_node", "2", "t.py"}),
            std::make_pair(int64_t{0}, int64_t{0}));
}

}  // namespace
}  // namespace scaleprof::collect
