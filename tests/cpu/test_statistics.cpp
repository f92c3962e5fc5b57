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

TEST(Summarize, EqualSamplesHaveTheirValueAsMeanAndNoSpreadExactly) {
  // 20 x 10000.123456789 sums to a double whose 20th part is 1.8e-12 off the value: a StdDev
  // computed from it was 1e-12 where there is no spread at all.
  const std::vector<double> samples(20, 10000.123456789);
  const auto s = summarize(samples, 2.0);
  EXPECT_EQ(s.mean, 10000.123456789);
  EXPECT_EQ(s.stddev, 0.0);
  EXPECT_EQ(s.ci95_lower, s.mean);
  EXPECT_EQ(s.ci95_upper, s.mean);
  EXPECT_EQ(s.rsd_pct, 0.0);
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

// The worst relative error over the grid below is 1.4e-10, at dof = 1e5 (where the exact tail's
// lgamma terms cancel most before the large-dof expansion takes over); below 3e-11 elsewhere.
constexpr double kQuantileRelTolerance = 5e-10;

TEST_P(StudentTQuantile, MatchesExactValues) {
  const auto [p, dof, expected] = GetParam();
  const double t = student_t_quantile(p, dof);
  if (expected == 0.0 || std::isinf(expected)) {
    EXPECT_EQ(t, expected) << "p=" << p << " dof=" << dof;
  } else {
    EXPECT_NEAR(t, expected, kQuantileRelTolerance * std::abs(expected)) << "p=" << p << " dof=" << dof;
  }
}

// Exact quantiles at each double p, from mpmath with 50 digits (bisection of
// 0.5 * betainc(dof/2, 1/2, 0, dof/(dof+t^2), regularized=True) = min(p, 1-p)), rounded to double.
// Tails from 1e-300 to 1 - 1e-12, dof from 0.1 to 1e12, both sides of the large-dof switch (1e5).
// Neither scipy's t.ppf nor Boost.Math serve as the reference: scipy 1.10's is off by up to 4.6e-9
// within [1e-6, 1 - 1e-6] and stops at +-1e100 beyond, Boost 1.74's by up to 4.9e-9 near the median.
INSTANTIATE_TEST_SUITE_P(
    Grid, StudentTQuantile,
    testing::ValuesIn(std::vector<QuantileCase>{
        {1e-300, 0.1, -inf}, {1e-30, 0.1, -1.6044257056665068e+296}, {1e-06, 0.1, -1.6044257056665582e+56},
        {0.025, 0.1, -1682362288745.0247}, {0.3, 0.1, -27.170126296735763}, {0.499999, 0.1, -6.752553579547711e-06},
        {0.9, 0.1, 1604425.7056665549}, {0.975, 0.1, 1682362288745.0105}, {0.999999999999, 0.1, 1.6047806754182552e+116},
        {1e-300, 0.5, -inf}, {1e-30, 0.5, -1.02849115631634e+59}, {1e-06, 0.5, -102849115631.63402},
        {0.025, 0.5, -164.55767348048852}, {0.3, 0.5, -1.0095258786071661}, {0.499999, 0.5, -3.708149354529025e-06},
        {0.9, 0.5, 10.27032441023451}, {0.975, 0.5, 164.55767348048823}, {0.999999999999, 0.5, 1.0285366618133392e+23},
        {1e-300, 1, -3.1830988618379066e+299}, {1e-30, 1, -3.183098861837906e+29}, {1e-06, 1, -318309.8861827435},
        {0.025, 1, -12.706204736174705}, {0.3, 1, -0.7265425280053609}, {0.499999, 1, -3.141592653516074e-06},
        {0.9, 1, 3.077683537175254}, {0.975, 1, 12.706204736174694}, {0.999999999999, 1, 318316927901.77966},
        {1e-300, 2.5, -8.765437882279991e+119}, {1e-30, 2.5, -876543788227.9991}, {1e-06, 2.5, -220.17342917823686},
        {0.025, 2.5, -3.574654842003683}, {0.3, 2.5, -0.5973077382523175}, {0.499999, 2.5, -2.76389134246888e-06},
        {0.9, 2.5, 1.7302509288071768}, {0.975, 2.5, 3.5746548420036817}, {0.999999999999, 2.5, 55306.663471176085},
        {1e-300, 4, -1.3160740129524924e+75}, {1e-30, 4, -41617914.50287813}, {1e-06, 4, -41.577854150450975},
        {0.025, 4, -2.7764451051977943}, {0.3, 4, -0.5686490630497055}, {0.499999, 4, -2.6666666665992693e-06},
        {0.9, 4, 1.533206274058944}, {0.975, 4, 2.7764451051977934}, {0.999999999999, 4, 1316.0800251221378},
        {1e-300, 10, -2.564525718948198e+30}, {1e-30, 10, -2564.5239317426153}, {1e-06, 10, -9.75199549094058},
        {0.025, 10, -2.228138851986275}, {0.3, 10, -0.5415280387550157}, {0.499999, 10, -2.569978034864843e-06},
        {0.9, 10, 1.3721836411103359}, {0.975, 10, 2.2281388519862744}, {0.999999999999, 10, 40.532186343811446},
        {1e-300, 30, -50178575360.50508}, {1e-30, 30, -49.88819553304385}, {1e-06, 30, -5.871117120418883},
        {0.025, 30, -2.042272456301238}, {0.3, 30, -0.5300190039065045}, {0.499999, 30, -2.5276002260585125e-06},
        {0.9, 30, 1.3104150253913958}, {0.975, 30, 2.0422724563012378}, {0.999999999999, 30, 11.397227795416011},
        {1e-300, 1000.0, -54.291388553051746}, {1e-30, 1000.0, -11.854333104084482}, {1e-06, 1000.0, -4.781608620458351},
        {0.025, 1000.0, -1.9623390808264085}, {0.3, 1000.0, -0.524567707309227}, {0.499999, 1000.0, -2.507255009869398e-06},
        {0.9, 1000.0, 1.2823987214609245}, {0.975, 1000.0, 1.962339080826408}, {0.999999999999, 1000.0, 7.1242321273824425},
        {1e-300, 10000.0, -38.35638432100424}, {1e-30, 10000.0, -11.502083307025492}, {1e-06, 10000.0, -4.756229685056779},
        {0.025, 10000.0, -1.9602012398906263}, {0.3, 10000.0, -0.5244172283454668}, {0.499999, 10000.0, -2.506690941056647e-06},
        {0.9, 10000.0, 1.2816362297304777}, {0.975, 10000.0, 1.960201239890626}, {0.999999999999, 10000.0, 7.0433746983484715},
        {1e-300, 100000.0, -37.174670665466216}, {1e-30, 100000.0, -11.4678210211617}, {1e-06, 100000.0, -4.753704716391288},
        {0.025, 100000.0, -1.9599877075346097}, {0.3, 100000.0, -0.5244021842335458}, {0.499999, 100000.0, -2.506634541145079e-06},
        {0.9, 100000.0, 1.2815600314493611}, {0.975, 100000.0, 1.9599877075346093}, {0.999999999999, 100000.0, 7.035374828293038},
        {1e-300, 100001, -37.174669386077134}, {1e-30, 100001, -11.467820983188185}, {1e-06, 100001, -4.753704713587096},
        {0.025, 100001, -1.9599877072973793}, {0.3, 100001, -0.5244021842168306}, {0.499999, 100001, -2.506634541082414e-06},
        {0.9, 100001, 1.2815600313647024}, {0.975, 100001, 1.9599877072973788}, {0.999999999999, 100001, 7.035374819412988},
        {1e-300, 10000000.0, -37.048368428741476}, {1e-30, 10000000.0, -11.464062641309859}, {1e-06, 10000000.0, -4.753427112755577},
        {0.025, 10000000.0, -1.9599642217672055}, {0.3, 10000000.0, -0.5244005294232538}, {0.499999, 10000000.0, -2.506628337232267e-06},
        {0.9, 10000000.0, 1.281551650203083}, {0.975, 10000000.0, 1.959964221767205}, {0.999999999999, 10000000.0, 7.034495788284389},
        {1e-300, 1000000000000.0, -37.047096312082125}, {1e-30, 1000000000000.0, -11.464024688823143}, {1e-06, 1000000000000.0, -4.7534243088509385},
        {0.025, 1000000000000.0, -1.9599639845424264}, {0.3, 1000000000000.0, -0.524400512708208}, {0.499999, 1000000000000.0, -2.506628274567186e-06},
        {0.9, 1000000000000.0, 1.2815515655454472}, {0.975, 1000000000000.0, 1.9599639845424262}, {0.999999999999, 1000000000000.0, 7.034486910136618},
        {0.5, 7, 0.0}}));

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
