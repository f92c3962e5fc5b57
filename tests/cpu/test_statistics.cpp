#include "kscope/statistics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "kscope/errors.hpp"

namespace {

constexpr double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double inf = std::numeric_limits<double>::infinity();

using kscope::geometric_mean;
using kscope::student_t_quantile;
using kscope::summarize;

TEST(Summarize, FiveSamples) {
  const std::vector<double> samples{4, 2, 5, 1, 3};
  const auto s = summarize(samples, 100.0);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_NEAR(s.stddev, 1.58113883008, 1e-10);  // sqrt(10 / 4)
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  // t(0.975, 4) * s / sqrt(5) = 2.776445105 * 1.58113883 / 2.236067977 = 1.963243
  EXPECT_NEAR(s.ci95_lower, 3.0 - 1.9632432, 1e-6);
  EXPECT_NEAR(s.ci95_upper, 3.0 + 1.9632432, 1e-6);
  EXPECT_NEAR(s.rsd_pct, 100.0 * 1.58113883008 / 3.0, 1e-8);
  ASSERT_TRUE(s.stable.has_value());
  EXPECT_TRUE(*s.stable);
}

TEST(Summarize, TwoSamplesUseTheWidestT) {
  const std::vector<double> samples{10, 12};
  const auto s = summarize(samples, 2.0);
  EXPECT_DOUBLE_EQ(s.mean, 11.0);
  EXPECT_NEAR(s.stddev, std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(s.median, 11.0);
  // 12.70620474 * sqrt(2) / sqrt(2) = 12.70620474
  EXPECT_NEAR(s.ci95_lower, 11.0 - 12.70620474, 1e-7);
  EXPECT_NEAR(s.ci95_upper, 11.0 + 12.70620474, 1e-7);
  EXPECT_NEAR(s.rsd_pct, 100.0 * std::sqrt(2.0) / 11.0, 1e-10);  // 12.86 %
  EXPECT_EQ(s.stable, false);
}

TEST(Summarize, EvenCountMedianIsTheMeanOfTheMiddlePair) {
  const std::vector<double> samples{7, 1, 3, 100};
  EXPECT_DOUBLE_EQ(summarize(samples, 2.0).median, 5.0);
}

TEST(Summarize, NaNSamplesAreExcludedAndNotCounted) {
  const std::vector<double> samples{nan, 1, 2, nan, 3, 4, 5, nan};
  const auto s = summarize(samples, 100.0);
  EXPECT_EQ(s.count, 5u);
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.median, 3.0);
  EXPECT_DOUBLE_EQ(s.min, 1.0);
  EXPECT_DOUBLE_EQ(s.max, 5.0);
  EXPECT_NEAR(s.stddev, 1.58113883008, 1e-10);
}

TEST(Summarize, SingleSampleHasNoSpread) {
  const std::vector<double> samples{nan, 42.0};
  const auto s = summarize(samples, 2.0);
  EXPECT_EQ(s.count, 1u);
  EXPECT_DOUBLE_EQ(s.mean, 42.0);
  EXPECT_DOUBLE_EQ(s.median, 42.0);
  EXPECT_DOUBLE_EQ(s.min, 42.0);
  EXPECT_DOUBLE_EQ(s.max, 42.0);
  EXPECT_TRUE(std::isnan(s.stddev));
  EXPECT_TRUE(std::isnan(s.ci95_lower));
  EXPECT_TRUE(std::isnan(s.ci95_upper));
  EXPECT_TRUE(std::isnan(s.rsd_pct));
  EXPECT_FALSE(s.stable.has_value());
}

TEST(Summarize, NoValidSampleLeavesEverythingUndefined) {
  for (const std::vector<double>& samples : {std::vector<double>{}, std::vector<double>{nan, nan}}) {
    const auto s = summarize(samples, 2.0);
    EXPECT_EQ(s.count, 0u);
    for (double v : {s.mean, s.stddev, s.min, s.max, s.median, s.ci95_lower, s.ci95_upper,
                     s.rsd_pct}) {
      EXPECT_TRUE(std::isnan(v));
    }
    EXPECT_FALSE(s.stable.has_value());
  }
}

TEST(Summarize, ZeroMeanHasNoRelativeSpread) {
  const std::vector<double> samples{-1, 1};
  const auto s = summarize(samples, 2.0);
  EXPECT_DOUBLE_EQ(s.mean, 0.0);
  EXPECT_NEAR(s.stddev, std::sqrt(2.0), 1e-12);
  EXPECT_FALSE(std::isnan(s.ci95_upper));
  EXPECT_TRUE(std::isnan(s.rsd_pct));
  EXPECT_FALSE(s.stable.has_value());
}

TEST(Summarize, RsdUsesTheMagnitudeOfANegativeMean) {
  const std::vector<double> samples{-10, -12};
  EXPECT_NEAR(summarize(samples, 2.0).rsd_pct, 100.0 * std::sqrt(2.0) / 11.0, 1e-10);
}

TEST(Summarize, StabilityThresholdIsStrict) {
  // s = 1, mean = 100: RSD exactly 1 %.
  const std::vector<double> samples{99, 100, 101};
  const auto s = summarize(samples, 1.0);
  EXPECT_NEAR(s.rsd_pct, 1.0, 1e-12);
  EXPECT_EQ(summarize(samples, 1.0 + 1e-9).stable, true);
  EXPECT_EQ(summarize(samples, 1.0 - 1e-9).stable, false);
}

TEST(Summarize, IdenticalSamplesAreStable) {
  const std::vector<double> samples{5, 5, 5, 5};
  const auto s = summarize(samples, 2.0);
  EXPECT_DOUBLE_EQ(s.stddev, 0.0);
  EXPECT_DOUBLE_EQ(s.ci95_lower, 5.0);
  EXPECT_DOUBLE_EQ(s.ci95_upper, 5.0);
  EXPECT_DOUBLE_EQ(s.rsd_pct, 0.0);
  EXPECT_EQ(s.stable, true);
}

TEST(Summarize, LargeOffsetKeepsPrecision) {
  // A naive sum of squares would lose every digit of the spread at this offset.
  const std::vector<double> samples{1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4, 1e9 + 5};
  EXPECT_NEAR(summarize(samples, 2.0).stddev, 1.58113883008, 1e-9);
}

struct QuantileCase {
  double p, dof, expected;
};

class StudentTQuantile : public testing::TestWithParam<QuantileCase> {};

TEST_P(StudentTQuantile, MatchesTables) {
  const auto [p, dof, expected] = GetParam();
  const double t = student_t_quantile(p, dof);
  if (expected == 0.0) {
    EXPECT_EQ(t, 0.0);
  } else {
    EXPECT_NEAR(t, expected, 1e-9 * std::abs(expected)) << "p=" << p << " dof=" << dof;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Values, StudentTQuantile,
    testing::Values(QuantileCase{0.975, 1, 12.7062047361747}, QuantileCase{0.975, 2, 4.30265272974946},
                    QuantileCase{0.975, 4, 2.77644510519779}, QuantileCase{0.975, 10, 2.22813885198627},
                    QuantileCase{0.975, 30, 2.04227245630124}, QuantileCase{0.995, 5, 4.03214298355523},
                    QuantileCase{0.5, 7, 0.0}, QuantileCase{0.025, 4, -2.77644510519779},
                    QuantileCase{0.9, 1, 3.07768353717525}, QuantileCase{0.999, 3, 10.2145318524074},
                    QuantileCase{0.975, 2.5, 3.57465484200368},  // fractional dof
                    QuantileCase{0.975, 1e3, 1.96233908082641},
                    QuantileCase{0.975, 1e6, 1.95996635681411}));

TEST(StudentTQuantileLimits, LargeDofTendsToTheNormalQuantile) {
  const double z975 = 1.95996398454005;
  // t(0.975, dof) - z is about (z^3 + z) / (4 dof): 2.4e-9 at dof = 1e9, and always positive.
  EXPECT_NEAR(student_t_quantile(0.975, 1e9), z975 + 2.3723e-9, 1e-13);
  EXPECT_NEAR(student_t_quantile(0.975, inf), z975, 1e-12);
  // Both sides of the switch to the large-dof expansion agree.
  EXPECT_NEAR(student_t_quantile(0.975, 1e5), student_t_quantile(0.975, 1e5 * (1 + 1e-9)), 1e-10);
}

TEST(StudentTQuantileLimits, ExtremeTailsStayFinite) {
  // dof = 1 is the Cauchy distribution: t = tan(pi (p - 1/2)).
  const double p = 1 - 1e-12;
  EXPECT_NEAR(student_t_quantile(p, 1), 1 / std::tan(std::numbers::pi * (1 - p)), 1e-6 * 3.2e11);
  EXPECT_NEAR(student_t_quantile(1e-200, 1), -1 / (std::numbers::pi * 1e-200), 1e-6 * 3.2e199);
}

TEST(StudentTQuantileLimits, IsAntisymmetric) {
  for (double p : {0.6, 0.9, 0.99, 0.999999}) {
    EXPECT_DOUBLE_EQ(student_t_quantile(1 - p, 3.5), -student_t_quantile(p, 3.5));
  }
}

TEST(StudentTQuantileLimits, InvalidArgumentsThrow) {
  for (double p : {0.0, 1.0, -0.1, 1.5, nan}) {
    EXPECT_THROW(student_t_quantile(p, 5), kscope::ConfigError) << "p=" << p;
  }
  for (double dof : {0.0, -1.0, nan}) {
    EXPECT_THROW(student_t_quantile(0.975, dof), kscope::ConfigError) << "dof=" << dof;
  }
}

TEST(GeometricMean, OfPowersOfTwo) {
  const std::vector<double> values{1, 2, 4, 8};
  EXPECT_NEAR(geometric_mean(values), std::sqrt(8.0), 1e-12);  // 2^(6/4)
}

TEST(GeometricMean, IgnoresNaN) {
  const std::vector<double> values{nan, 2, 8, nan};
  EXPECT_NEAR(geometric_mean(values), 4.0, 1e-12);
}

TEST(GeometricMean, OneValueIsItself) {
  const std::vector<double> values{3.5};
  EXPECT_NEAR(geometric_mean(values), 3.5, 1e-15);
}

TEST(GeometricMean, UndefinedCases) {
  EXPECT_TRUE(std::isnan(geometric_mean(std::vector<double>{})));
  EXPECT_TRUE(std::isnan(geometric_mean(std::vector<double>{nan, nan})));
  EXPECT_TRUE(std::isnan(geometric_mean(std::vector<double>{1, -2, 3})));
  EXPECT_TRUE(std::isnan(geometric_mean(std::vector<double>{0, -2})));  // negative wins over zero
}

TEST(GeometricMean, AZeroMakesItZero) {
  EXPECT_EQ(geometric_mean(std::vector<double>{5, 0, 7}), 0.0);
  EXPECT_EQ(geometric_mean(std::vector<double>{0, inf}), 0.0);
}

TEST(GeometricMean, NoOverflowForLargeValues) {
  const std::vector<double> values{1e300, 1e300, 1e300};
  EXPECT_NEAR(geometric_mean(values), 1e300, 1e288);
}

}  // namespace

TEST(RobustStatistics, QuartilesPercentilesAndTukeyOutliers) {
  // numpy: np.percentile([1,2,3,4,5,6,7,8,9,100], [25,75,20,80]) = 3.25, 7.75, 2.8, 8.2
  const std::vector<double> v{100, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const auto s = kscope::summarize(v, 2.0);
  EXPECT_DOUBLE_EQ(s.q1, 3.25);
  EXPECT_DOUBLE_EQ(s.q3, 7.75);
  EXPECT_DOUBLE_EQ(s.iqr, 4.5);
  EXPECT_NEAR(s.p20, 2.8, 1e-12);
  EXPECT_NEAR(s.p80, 8.2, 1e-12);
  EXPECT_EQ(s.outliers, 1u);  // 100 > 7.75 + 6.75
  const auto one = kscope::summarize(std::vector<double>{4}, 2.0);
  EXPECT_DOUBLE_EQ(one.q1, 4.0);
  EXPECT_DOUBLE_EQ(one.iqr, 0.0);
  EXPECT_EQ(one.outliers, 0u);
  EXPECT_TRUE(std::isnan(kscope::summarize(std::vector<double>{}, 2.0).iqr));
}
