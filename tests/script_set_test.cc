// The save/submit decision of `scaleprof slurm` and `slurm analyze`: scaleprof's rule, itwinai's
// rule (flags over keys) and the contradictions, as a library function.
#include <gtest/gtest.h>

#include "launch/script_set.h"

namespace scaleprof::launch {
namespace {

struct DecideCase {
  const char* what;
  ScriptFlags flags;
  std::optional<bool> submit_job, save_script;  // itwinai's keys in the configuration
  bool save, submit;
};

TEST(ScriptSet, DecideActionFollowsScaleprofsAndItwinaisRules) {
  const DecideCase cases[] = {
      {"no flags: save and submit", {}, {}, {}, true, true},
      {"--no-submit-job", {.no_submit = true}, {}, {}, true, false},
      {"--no-save-script", {.no_save = true}, {}, {}, false, true},
      {"-j alone: itwinai's rule, submit only", {.submit = true}, {}, {}, false, true},
      {"-s alone: save only", {.save = true}, {}, {}, true, false},
      {"-j -s", {.submit = true, .save = true}, {}, {}, true, true},
      {"submit_job: true key", {}, true, {}, false, true},
      {"both keys false: a preview", {}, false, false, false, false},
      {"-s over submit_job: false", {.save = true}, false, {}, true, false},
      {"--no-submit-job over submit_job: true", {.no_submit = true}, true, true, true, false},
      {"--preview", {.preview = true}, {}, {}, false, false},
  };
  for (const DecideCase& c : cases) {
    LaunchConfig config;
    config.submit_job = c.submit_job;
    config.save_script = c.save_script;
    auto action = decide_action(c.flags, config);
    ASSERT_TRUE(action) << c.what << ": " << action.error().message;
    EXPECT_EQ(action.value().save, c.save) << c.what;
    EXPECT_EQ(action.value().submit, c.submit) << c.what;
  }
}

TEST(ScriptSet, ContradictingFlagsAreUsageErrors) {
  const ScriptFlags contradictions[] = {
      {.no_submit = true, .submit = true},
      {.no_save = true, .save = true},
      {.submit = true, .preview = true},
      {.save = true, .preview = true},
  };
  for (const ScriptFlags& flags : contradictions) {
    auto action = decide_action(flags, LaunchConfig{});
    ASSERT_FALSE(action);
    EXPECT_EQ(action.error().kind, ErrorKind::kUsage) << action.error().message;
  }
}

}  // namespace
}  // namespace scaleprof::launch
