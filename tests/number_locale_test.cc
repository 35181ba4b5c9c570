// Numbers read the same under any C locale: a process that embeds the Python module (a notebook
// that called setlocale) may have a decimal comma, and "1.5e3" must still be 1500.
#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/number_text.h"
#include "scratch_dir.h"
#include "trace/number_parse.h"

namespace scaleprof {
namespace {

// Sets LC_NUMERIC to German (decimal comma), compiled with localedef into a scratch folder, since
// the machine may have no such locale installed; restores "C" when it ends.
class CommaLocale {
 public:
  explicit CommaLocale(const std::filesystem::path& dir) {
    const std::string compile = "localedef -i de_DE -f UTF-8 '" + (dir / "de_DE.UTF-8").string() + "' >/dev/null 2>&1";
    if (std::system(compile.c_str()) != 0) return;
    ::setenv("LOCPATH", dir.c_str(), 1);
    active_ = std::setlocale(LC_NUMERIC, "de_DE.UTF-8") != nullptr;
  }
  ~CommaLocale() {
    std::setlocale(LC_NUMERIC, "C");
    ::unsetenv("LOCPATH");
  }
  CommaLocale(const CommaLocale&) = delete;
  CommaLocale& operator=(const CommaLocale&) = delete;
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

TEST(NumberLocale, ExponentsAndDecimalsReadTheSameUnderACommaLocale) {
  testing::ScratchDir dir;
  CommaLocale comma(dir.path());
  if (!comma.active()) GTEST_SKIP() << "localedef could not build de_DE.UTF-8 (the locales package is missing)";
  // The locale is in force: the C library itself now stops "1.5" at the point.
  char* end = nullptr;
  const char* text = "1.5";
  EXPECT_EQ(std::strtod(text, &end), 1.0);
  EXPECT_EQ(end, text + 1);
  int64_t ns = 0;
  bool fractional = false;
  ASSERT_EQ(trace::parse_microseconds_as_ns("1.5e3", &ns, &fractional), trace::NumberParse::kOk);
  EXPECT_EQ(ns, 1500000);
  ASSERT_EQ(trace::parse_microseconds_as_ns("2.25", &ns, &fractional), trace::NumberParse::kOk);
  EXPECT_EQ(ns, 2250);
  int64_t value = 0;
  ASSERT_EQ(trace::parse_int64("2.5e1", &value), trace::NumberParse::kOk);
  EXPECT_EQ(value, 25);
  EXPECT_EQ(parse_double("0.125"), 0.125);
  EXPECT_EQ(parse_double("1e-3"), 0.001);
}

}  // namespace
}  // namespace scaleprof
