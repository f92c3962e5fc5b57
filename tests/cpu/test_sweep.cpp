#include <gtest/gtest.h>

#include "kscope/errors.hpp"
#include "kscope/sweep.hpp"
#include "test_support.hpp"

using kscope::ConfigError;
using kscope::Sweep;
using kscope::ValueType;
using kscope_test::error_of;


TEST(Sweep, CartesianProductFirstAxisSlowest) {
  auto configs = Sweep().axis("n", {1, 2}).axis("dtype", {"f32", "f16", "bf16"}).configs();
  ASSERT_EQ(configs.size(), 6u);
  EXPECT_EQ(configs[0].to_string(), "n=1, dtype=f32");
  EXPECT_EQ(configs[1].to_string(), "n=1, dtype=f16");
  EXPECT_EQ(configs[5].to_string(), "n=2, dtype=bf16");
  EXPECT_EQ(configs[4].get<std::int64_t>("n"), 2);
  EXPECT_EQ(configs[4].get<std::string>("dtype"), "f16");
  for (std::size_t i = 0; i < configs.size(); ++i) EXPECT_EQ(configs[i].index(), i);
}

TEST(Sweep, ValueTypesAreKeptAndStringLiteralIsNotBool) {
  auto c = Sweep().axis("i", {7}).axis("x", {2.5}).axis("s", {"text"}).axis("b", {true}).configs().at(0);
  EXPECT_EQ(c.at("i").type(), ValueType::integer);
  EXPECT_EQ(c.at("x").type(), ValueType::real);
  EXPECT_EQ(c.at("s").type(), ValueType::text);
  EXPECT_EQ(c.at("b").type(), ValueType::boolean);
  EXPECT_DOUBLE_EQ(c.get<double>("i"), 7.0);  // integers widen to double
  EXPECT_TRUE(c.get<bool>("b"));
}

TEST(Sweep, ZippedGroupsAreCrossedWithAxes) {
  auto configs = Sweep().zip({"m", "k"}, {{64, 128}, {256, 512}}).axis("dtype", {"f32", "f16"}).configs();
  ASSERT_EQ(configs.size(), 4u);
  EXPECT_EQ(configs[0].to_string(), "m=64, k=128, dtype=f32");
  EXPECT_EQ(configs[3].to_string(), "m=256, k=512, dtype=f16");
}

TEST(Sweep, NoAxesGivesOneEmptyConfig) {
  auto configs = Sweep().configs();
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].to_string(), "(no axes)");
}

TEST(Sweep, WrongArityIsAnErrorNamingTheRow) {
  const auto msg = error_of([] { Sweep().zip({"m", "k"}, {{1, 2}, {3}}).configs(); });
  EXPECT_NE(msg.find("config 1 of the zipped axes has 1 values but 2 axes are named"), std::string::npos) << msg;
}

TEST(Sweep, MixedTypesOnOneAxisAreAnError) {
  const auto msg = error_of([] { Sweep().axis("x", {1.5, 2}).configs(); });
  EXPECT_NE(msg.find("sweep axis 'x' mixes types: value 2 is of type integer but the first value is of type double"),
            std::string::npos)
      << msg;
}

TEST(Sweep, EmptyAxisDuplicateAndEmptyNamesAreErrors) {
  EXPECT_NE(error_of([] { Sweep().axis("n", {}).configs(); }).find("axis 'n' has no values"), std::string::npos);
  EXPECT_NE(error_of([] { Sweep().axis("n", {1}).axis("n", {2}).configs(); }).find("'n' is declared twice"),
            std::string::npos);
  EXPECT_NE(error_of([] { Sweep().axis("", {1}).configs(); }).find("empty name"), std::string::npos);
  EXPECT_NE(error_of([] { Sweep().zip({}, {{}}).configs(); }).find("no axis names"), std::string::npos);
}

TEST(Config, UnknownAxisSuggestsTheClosest) {
  auto c = Sweep().axis("size", {1}).axis("dtype", {"f32"}).configs().at(0);
  const auto msg = error_of([&] { c.get<std::int64_t>("szie"); });
  EXPECT_NE(msg.find("config has no axis 'szie'; closest axes: 'size'"), std::string::npos) << msg;
}

TEST(Config, WrongTypeNamesBothTypesAndTheFix) {
  auto c = Sweep().axis("dtype", {"f32"}).configs().at(0);
  const auto msg = error_of([&] { c.get<std::int64_t>("dtype"); });
  EXPECT_NE(msg.find("config value f32 is of type string, not integer: read it with get<std::string>()"),
            std::string::npos)
      << msg;
}
