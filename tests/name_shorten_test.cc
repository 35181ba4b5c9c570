#include "report/name_shorten.h"

#include <gtest/gtest.h>

#include "report/table.h"

namespace scaleprof::report {
namespace {

const std::string kKernel =
    "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::"
    "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda(float)#1}>("
    "at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
    "operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, at::native::gpu_kernel_impl_nocast<"
    "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::{lambda("
    "float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()"
    "#3}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})";

TEST(ShortenName, FittingNamesAreUnchanged) {
  EXPECT_EQ(shorten_name("aten::mm", 8), "aten::mm");
  EXPECT_EQ(shorten_name(kKernel, 0), kKernel);
  EXPECT_EQ(shorten_name(kKernel, kKernel.size()), kKernel);
}

TEST(ShortenName, ArgumentListsGoFirstThenTemplates) {
  EXPECT_EQ(shorten_name("void f<int, float>(float*, long)", 26), "void f<int, float>(\u2026)");
  EXPECT_EQ(shorten_name(kKernel, 60), "void at::native::elementwise_kernel<\u2026>(\u2026)");
  EXPECT_EQ(display_width(shorten_name(kKernel, 60)), 41u);
}

TEST(ShortenName, TheMiddleGoesLastAndTheWidthHolds) {
  const std::string s = shorten_name(kKernel, 30);
  EXPECT_EQ(display_width(s), 30u);
  EXPECT_EQ(s, "void at::native::ele\u2026nel<\u2026>(\u2026)");
  for (size_t w = 1; w < 80; ++w) EXPECT_LE(display_width(shorten_name(kKernel, w)), w) << w;
}

TEST(ShortenName, UnpairedBracketsAndUtf8AreSafe) {
  EXPECT_EQ(shorten_name("operator<<(std::ostream&, int)", 14), "operator<<(\u2026)");
  EXPECT_EQ(shorten_name("Memcpy DtoH (Device -> Host)", 28), "Memcpy DtoH (Device -> Host)");
  const std::string utf8 = "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9";  // 10 code points, 20 bytes
  EXPECT_EQ(display_width(utf8), 10u);
  EXPECT_EQ(shorten_name(utf8, 7), "\u00e9\u00e9\u00e9\u00e9\u2026\u00e9\u00e9");
}

TEST(TableRender, NamesShrinkToTheWidthNumbersNever) {
  Table t;
  t.columns = {{"calls", "Calls"}, {"name", "Name"}};
  t.add_row({int64_t{123456789}, kKernel});
  t.add_row({int64_t{1}, "aten::mm"});
  RenderOptions narrow;
  narrow.max_width = 60;
  const std::string text = render(t, narrow);
  EXPECT_NE(text.find("123456789  void at::native::elementwise_kernel<\u2026>(\u2026)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("        1  aten::mm\n"), std::string::npos) << text;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    EXPECT_LE(display_width(text.substr(start, end - start)), 60u) << text.substr(start, end - start);
    start = end + 1;
  }
  // Unlimited text, CSV and JSON keep the whole name.
  EXPECT_NE(render(t, RenderOptions{}).find(kKernel), std::string::npos);
  for (Format f : {Format::kCsv, Format::kJson}) {
    RenderOptions o = narrow;
    o.format = f;
    EXPECT_NE(render(t, o).find("{lambda(int)#1})"), std::string::npos);
  }
}

}  // namespace
}  // namespace scaleprof::report
