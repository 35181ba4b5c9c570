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

// --- issue 18: hostile characters, sizes and YAML amplification -----------------------------------

TEST(Config, EveryTerminalControlIsRejectedAndNamed) {
  auto problem = [](const std::string& value) {
    Config c = launch_config();
    auto r = c.set_override("--training_cmd", value);
    return r ? std::string("accepted") : r.error().message;
  };
  const std::string tail = " is not allowed (values end up in scripts and file names)";
  EXPECT_EQ(problem(std::string("ab\0c", 4)), "--training_cmd: a NUL byte at character 3" + tail);
  EXPECT_EQ(problem("a\tb"), "--training_cmd: a tab at character 2" + tail);
  EXPECT_EQ(problem("python \xC2\x9B"
                    "2J"),
            "--training_cmd: the control character U+009B at character 8" + tail);
  // "python train.py '<U+202E>txt.exe'": the script would read differently from what it runs.
  EXPECT_EQ(problem("python 't\xE2\x80\xAEyp.niart'"),
            "--training_cmd: the bidirectional control U+202E at character 10" + tail);
  EXPECT_EQ(problem("a\xE2\x81\xA6"
                    "b"),
            "--training_cmd: the bidirectional control U+2066 at character 2" + tail);
  EXPECT_EQ(problem("a\xE2\x80\x8F"), "--training_cmd: the bidirectional control U+200F at character 2" + tail);
  EXPECT_EQ(problem("a\xD8\x9C"), "--training_cmd: the bidirectional control U+061C at character 2" + tail);
  EXPECT_EQ(problem("a\xE2\x80\x8B"), "--training_cmd: the invisible format character U+200B at character 2" + tail);
  EXPECT_EQ(problem("a\xE2\x80\xA8"), "--training_cmd: the invisible format character U+2028 at character 2" + tail);
  EXPECT_EQ(problem("caf\xC3\xA9 \xff"), "--training_cmd: the byte 0xff (not valid UTF-8) at character 6" + tail);
  EXPECT_EQ(problem("caf\xC3\xA9 \xE6\x97\xA5"), "accepted");  // other UTF-8 is fine

  // The same through a YAML file (an escaped NUL in a double-quoted string) and a mapping value.
  Config c = launch_config();
  auto nul = c.merge_text("training_cmd: \"python\\0x\"\n", "s.yaml");
  ASSERT_FALSE(nul);
  EXPECT_EQ(nul.error().message, "s.yaml:1:15: training_cmd: a NUL byte at character 7" + tail);
  auto bidi = c.merge_text("env: {A: \"x\\u202Ey\"}\n", "s.yaml");
  ASSERT_FALSE(bidi);
  EXPECT_EQ(bidi.error().message, "s.yaml:1:7: env: the bidirectional control U+202E at character 2" + tail);
}

// A raw NUL byte in the file: yaml-cpp hands it on as a tab ("a tab at character 3" before); YAML
// forbids it, and the message names it where it is.
TEST(Config, RawNulByteInTheFileIsNamed) {
  Config c = launch_config();
  const std::string text("num_nodes: 2\ntraining_cmd: py\0thon\n", 35);
  auto r = c.merge_text(text, "s.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "s.yaml:2:17: a NUL byte is not allowed in a YAML file");
  const std::string path = write_temp("nul.yaml", text);
  auto file = c.merge_file(path);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().message, path + ":2:17: a NUL byte is not allowed in a YAML file");
}

TEST(Config, SecondDocumentIsAnError) {
  Config c = launch_config();
  auto r = c.merge_text("num_nodes: 2\n---\nnum_nodes: 3\n", "s.yaml");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "s.yaml:2:1: a second YAML document ('---'); a configuration file holds one");
  EXPECT_EQ(c.integer("num_nodes"), 1);                             // nothing changed
  EXPECT_TRUE(c.merge_text("---\nnum_nodes: 2\n...\n", "s.yaml"));  // one document, explicitly marked
  EXPECT_EQ(c.integer("num_nodes"), 2);
}

// Aliases repeat a node without repeating its text: a small file must not expand to gigabytes
// (a 220 kB file of 5,000 aliases to a 200 kB string took 20 GB before it was counted).
TEST(Config, AliasExpansionIsCountedBeforeAnythingIsBuilt) {
  const std::string big(60'000, 'x');
  std::string text = "python_venv: &a " + big + "\npre_exec: [";
  for (int i = 0; i < 100; ++i) text += (i ? ", " : "") + std::string("*a");
  text += "]\n";
  Config c = launch_config();
  auto bytes = c.merge_text(text, "bomb.yaml");
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.error().message,
            "bomb.yaml:2:" + std::to_string(12 + 4 * 68) +  // the 69th alias passes 4 MiB
                ": with its aliases expanded, the file holds more than 4 MiB of text (the limit)");

  // Nested lists of aliases ("billion laughs"): 10^9 values from 200 bytes.
  std::string laughs = "pre_exec: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 9; ++i) {
    laughs += "env" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) laughs += (k ? ", " : "") + std::string("*l") + std::to_string(i - 1);
    laughs += "]\n";
  }
  auto values = c.merge_text(laughs, "laughs.yaml");
  ASSERT_FALSE(values);
  EXPECT_NE(
      values.error().message.find("with its aliases expanded, the file holds more than 100000 values (the limit)"),
      std::string::npos)
      << values.error().message;
  EXPECT_EQ(values.error().message.rfind("laughs.yaml:5:", 0), 0u) << values.error().message;

  auto recursive = c.merge_text("pre_exec: &r [a, *r]\n", "r.yaml");
  ASSERT_FALSE(recursive);
  EXPECT_EQ(recursive.error().message, "r.yaml:1:18: an alias inside the node it names (a recursive alias)");

  // Ordinary aliases still work.
  ASSERT_TRUE(c.merge_text("python_venv: &v /opt/venv\ncontainer: *v\n", "ok.yaml"));
  EXPECT_EQ(c.str("container"), "/opt/venv");
  // And overrides given as YAML lists pass the same counter.
  auto flag =
      c.set_override("--pre_exec", "[&a " + big +
                                       ", *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, "
                                       "*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, "
                                       "*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, "
                                       "*a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, *a, "
                                       "*a, *a, *a, *a]");
  ASSERT_FALSE(flag);
  EXPECT_NE(flag.error().message.find("more than 4 MiB of text (the limit)"), std::string::npos);
}

TEST(Config, FileValueAndListSizesAreBounded) {
  Config c = launch_config();
  auto value = c.set_override("--training_cmd", std::string(70'000, 'x'));
  ASSERT_FALSE(value);
  EXPECT_EQ(value.error().message, "--training_cmd: a value of 70000 bytes; at most 64 KiB");
  std::string list = "pre_exec: [";
  for (int i = 0; i < 1001; ++i) list += (i ? ", " : "") + std::string("a");
  auto entries = c.merge_text(list + "]\n", "l.yaml");
  ASSERT_FALSE(entries);
  EXPECT_EQ(entries.error().message, "l.yaml:1:11: pre_exec: a list of 1001 entries; at most 1000");
  std::string nodes;
  for (int i = 1; i <= 1001; ++i) nodes += (i > 1 ? "," : "") + std::to_string(i);
  auto flag_list = c.set_override("--scalability_nodes", nodes);
  ASSERT_FALSE(flag_list);
  EXPECT_EQ(flag_list.error().message, "--scalability_nodes: more than 1000 entries");
  const std::string path = write_temp("huge.yaml", "# " + std::string(2u << 20, 'x') + "\n");
  auto file = c.merge_file(path);
  ASSERT_FALSE(file);
  EXPECT_EQ(file.error().message, path + ": larger than 1 MiB; a configuration file is never that large");
  // /dev/zero is refused after reading one byte past the limit, not read for ever.
  auto zero = c.merge_file("/dev/zero");
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().message, "/dev/zero: larger than 1 MiB; a configuration file is never that large");
}

TEST(Config, JobCountOfALaunchIsBounded) {
  Config c = launch_config();
  ASSERT_TRUE(c.merge_text("training_cmd: python t.py\nmode: scaling-test\nrepetitions: 1000\n", "big.yaml"));
  std::string nodes;
  for (int i = 1; i <= 100; ++i) nodes += (i > 1 ? "," : "") + std::to_string(i);
  ASSERT_TRUE(c.set_override("--scalability_nodes", nodes));
  auto l = launch::make_launch_config(c, "/w", "/s");
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().message,
            "scaling-test would submit 400000 jobs (100 node counts x 4 strategies x 1000 repetitions, from "
            "--scalability_nodes, default and big.yaml:3); at most 2000 per launch: split it into several "
            "experiments");
  ASSERT_TRUE(c.set_override("--repetitions", "5"));
  EXPECT_TRUE(launch::make_launch_config(c, "/w", "/s"));  // 2,000 jobs: the limit itself is allowed
}

}  // namespace
}  // namespace scaleprof::config
