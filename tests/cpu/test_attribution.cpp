#include <gtest/gtest.h>

#include "core/model/attribution.hpp"

using kscope::detail::kernel_matches;

TEST(KernelMatches, FullNameBareNameAndTemplateFreeName) {
  const std::string k = "void ns::saxpy<float>(int, float const*, float*)";
  EXPECT_TRUE(kernel_matches(k, k));
  EXPECT_TRUE(kernel_matches(k, "ns::saxpy<float>"));
  EXPECT_TRUE(kernel_matches(k, "ns::saxpy"));
  EXPECT_FALSE(kernel_matches(k, "saxpy"));  // namespaces are part of the name
  EXPECT_FALSE(kernel_matches(k, "ns::saxpy<double>"));
}

TEST(KernelMatches, ReturnTypeInsideTemplateArgumentsIsNotCut) {
  const std::string k = "void reduce<std::pair<int, float> >(float*)";
  EXPECT_TRUE(kernel_matches(k, "reduce<std::pair<int, float> >"));
  EXPECT_TRUE(kernel_matches(k, "reduce"));
}

TEST(KernelMatches, PlainCNames) {
  EXPECT_TRUE(kernel_matches("copy_kernel", "copy_kernel"));
  EXPECT_FALSE(kernel_matches("copy_kernel", "copy"));
}
