// The shared configuration mechanism: merge order, provenance, and errors with file:line and hints.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "config/config.h"
#include "launch/launch_config.h"

namespace scaleprof::config {
namespace {

Config launch_config() {
  return Config(launch::launch_fields());
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("scaleprof-config-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(Config, DefaultsCarryTheirSource) {
  Config c = launch_config();
  EXPECT_EQ(c.str("mode"), "single");
  EXPECT_EQ(c.integer("num_nodes"), 1);
  EXPECT_EQ(c.int_list("scalability_nodes"), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(c.integer("repetitions"), 1);
  EXPECT_EQ(c.str("script_dir"), "slurm-scripts");
  EXPECT_EQ(c.entry("num_nodes").source, "default");
}

TEST(Config, FilesMergeLeftToRightThenOverridesInOrder) {
  Config c = launch_config();
  ASSERT_TRUE(
      c.merge_text("num_nodes: 2\nscalability_nodes: [1, 2]\nenv:\n  A: one\n  B: two\njob_name: base\n", "base.yaml"));
  ASSERT_TRUE(
      c.merge_text("# comment\nnum_nodes: 4\nenv:\n  B: zwei\n  C: drei\nscalability_nodes: [8]\n", "ddp.yaml"));
  EXPECT_EQ(c.integer("num_nodes"), 4);
  EXPECT_EQ(c.entry("num_nodes").source, "ddp.yaml:2");
  // Lists replace; maps merge key by key.
  EXPECT_EQ(c.int_list("scalability_nodes"), (std::vector<int64_t>{8}));
  EXPECT_EQ(c.string_map("env"), (StringMap{{"A", "one"}, {"B", "zwei"}, {"C", "drei"}}));
  EXPECT_EQ(c.str("job_name"), "base");
  EXPECT_EQ(c.entry("job_name").source, "base.yaml:6");
  ASSERT_TRUE(c.set_override("--num-nodes", "8"));
  ASSERT_TRUE(c.set_override("--num_nodes", "16"));
  EXPECT_EQ(c.integer("num_nodes"), 16);
  EXPECT_EQ(c.entry("num_nodes").source, "--num_nodes");
  ASSERT_TRUE(c.set_override("--scalability_nodes", "1,2,4"));
  EXPECT_EQ(c.int_list("scalability_nodes"), (std::vector<int64_t>{1, 2, 4}));
  ASSERT_TRUE(c.set_override("--scalability-nodes", "[2, 16]"));
  EXPECT_EQ(c.int_list("scalability_nodes"), (std::vector<int64_t>{2, 16}));
  ASSERT_TRUE(c.set_override("--env", "D=x=y"));
  EXPECT_EQ(c.string_map("env").back(), (std::pair<std::string, std::string>{"D", "x=y"}));
  ASSERT_TRUE(c.set_override("--strategies", "ddp,horovod"));
  EXPECT_EQ(c.string_list("strategies"), (std::vector<std::string>{"ddp", "horovod"}));
  ASSERT_TRUE(c.set_override("--exclusive", "yes"));
  EXPECT_TRUE(c.boolean("exclusive"));
}

TEST(Config, RealFilesAndItwinaiNames) {
  const std::string path = write_temp("slurm.yaml", "dist_strat: horovod\nerr_out: logs/e.err\nmemory: 16G\n");
  Config c = launch_config();
  ASSERT_TRUE(c.merge_file(path));
  EXPECT_EQ(c.str("dist_strategy"), "horovod");
  EXPECT_EQ(c.entry("dist_strategy").source, path + ":1");
  EXPECT_EQ(c.str("std_err"), "logs/e.err");
  EXPECT_EQ(c.str("mem"), "16G");
  auto missing = c.merge_file(path + ".missing");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, path + ".missing: cannot read: No such file or directory");
}

TEST(Config, UnknownKeyNamesFileLineAndClosestKey) {
  Config c = launch_config();
  auto r = c.merge_text("job_name: a\n\nnum_node: 2\n", "slurm.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "slurm.yaml:3:1: unknown key 'num_node' (did you mean 'num_nodes'?)");
  auto r2 = c.merge_text("gpus_pernode: 2\n", "x.yaml");
  ASSERT_FALSE(r2);
  EXPECT_EQ(r2.error().message, "x.yaml:1:1: unknown key 'gpus_pernode' (did you mean 'gpus_per_node'?)");
  auto r3 = c.merge_text("completely_unrelated: 2\n", "x.yaml");
  ASSERT_FALSE(r3);
  EXPECT_EQ(r3.error().message, "x.yaml:1:1: unknown key 'completely_unrelated'");
  auto flag = c.set_override("--job-nme", "x");
  ASSERT_FALSE(flag);
  EXPECT_EQ(flag.error().message, "unknown option '--job_nme' (did you mean '--job_name'?)");
  // Nothing of a rejected file is applied.
  EXPECT_EQ(c.str("job_name"), "scaleprof");
}

TEST(Config, WrongTypesAndRangesNameThePlace) {
  Config c = launch_config();
  auto t = c.merge_text("mode: single\nnum_nodes: four\n", "s.yaml");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().message, "s.yaml:2:12: num_nodes: expected an integer, got 'four'");
  auto range = c.merge_text("num_nodes: 0\n", "s.yaml");
  ASSERT_FALSE(range);
  EXPECT_EQ(range.error().message, "s.yaml:1:12: num_nodes: 0 is out of range (1 to 100000)");
  auto list = c.merge_text("scalability_nodes: [1, 2, x]\n", "s.yaml");
  ASSERT_FALSE(list);
  EXPECT_EQ(list.error().message, "s.yaml:1:27: scalability_nodes: expected an integer, got 'x'");
  auto choice = c.merge_text("dist_strategy: dpp\n", "s.yaml");
  ASSERT_FALSE(choice);
  EXPECT_EQ(choice.error().message,
            "s.yaml:1:16: dist_strategy: 'dpp' is not one of ddp, fsdp, deepspeed, horovod (did you mean 'ddp'?)");
  auto boolean = c.merge_text("exclusive: maybe\n", "s.yaml");
  ASSERT_FALSE(boolean);
  EXPECT_EQ(boolean.error().message, "s.yaml:1:12: exclusive: expected true or false, got 'maybe'");
  auto map = c.merge_text("env: [a]\n", "s.yaml");
  ASSERT_FALSE(map);
  EXPECT_EQ(map.error().message, "s.yaml:1:6: env: expected a mapping of names to strings, got a list");
  auto nested = c.merge_text("job_name: {a: b}\n", "s.yaml");
  ASSERT_FALSE(nested);
  EXPECT_EQ(nested.error().message, "s.yaml:1:11: job_name: expected a string, got a mapping");
  auto empty = c.merge_text("strategies: []\n", "s.yaml");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().message, "s.yaml:1:13: strategies: must not be empty");
  auto twice = c.merge_text("num_nodes: 1\nnum-nodes: 2\n", "s.yaml");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message, "s.yaml:2:1: 'num_nodes' is set twice (first at s.yaml:1)");
  auto flag = c.set_override("--repetitions", "-1");
  ASSERT_FALSE(flag);
  EXPECT_EQ(flag.error().message, "--repetitions: -1 is out of range (1 to 1000)");
  auto overflow = c.set_override("--num_nodes", "99999999999999999999");
  ASSERT_FALSE(overflow);
  EXPECT_EQ(overflow.error().message, "--num_nodes: expected an integer, got '99999999999999999999'");
}

TEST(Config, ControlCharactersAreRejected) {
  Config c = launch_config();
  auto r = c.merge_text("job_name: \"a\\nb\"\n", "s.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message,
            "s.yaml:1:11: job_name: a newline at character 2 is not allowed (values end up in scripts and file names)");
  auto flag = c.set_override("--training_cmd", "python x.py\rrm");
  ASSERT_FALSE(flag);
  EXPECT_EQ(flag.error().message,
            "--training_cmd: a carriage return at character 12 is not allowed (values end up in scripts and file "
            "names)");
  auto env = c.set_override("--env", "A=\x1b[31m");
  ASSERT_FALSE(env);
}

TEST(Config, InvalidYamlAndWrongShapes) {
  Config c = launch_config();
  auto r = c.merge_text("num_nodes: [1, 2\n", "s.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message.rfind("s.yaml:2:1: invalid YAML: ", 0), 0u) << r.error().message;
  auto top = c.merge_text("- a\n- b\n", "s.yaml");
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().message, "s.yaml:1:1: expected a mapping of field names to values (e.g. 'num_nodes: 2')");
  EXPECT_TRUE(c.merge_text("", "empty.yaml"));
  EXPECT_TRUE(c.merge_text("# only a comment\n", "empty.yaml"));
}

TEST(Config, FormatValueRoundTripsThroughYaml) {
  EXPECT_EQ(format_value(Value{std::string("plain")}), "plain");
  EXPECT_EQ(format_value(Value{std::string("123")}), "\"123\"");
  EXPECT_EQ(format_value(Value{std::string("")}), "\"\"");
  EXPECT_EQ(format_value(Value{std::string("a: b")}), "\"a: b\"");
  EXPECT_EQ(format_value(Value{std::vector<int64_t>{1, 2}}), "[1, 2]");
  EXPECT_EQ(format_value(Value{StringMap{{"A", "x y"}}}), "{A: x y}");
  EXPECT_EQ(format_value(Value{true}), "true");
}

TEST(Config, ClosestName) {
  const std::vector<std::string> names = {"num_nodes", "gpus_per_node", "job_name"};
  EXPECT_EQ(closest_name("num_node", names), "num_nodes");
  EXPECT_EQ(closest_name("jobname", names), "job_name");
  EXPECT_EQ(closest_name("xyz", names), "");
}

}  // namespace
}  // namespace scaleprof::config
