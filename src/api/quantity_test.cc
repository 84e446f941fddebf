#include "berth/api/quantity.h"

#include <gtest/gtest.h>

#include <string>

namespace berth {
namespace {

using F = Quantity::Format;

Quantity MustParse(const std::string& s) {
  auto q = Quantity::Parse(s);
  EXPECT_TRUE(q.ok()) << s << ": " << (q.ok() ? "" : q.error().message);
  return q.ok() ? q.value() : Quantity();
}

struct ParseCase {
  std::string in;
  int64_t milli;  // expected MilliValue
  int64_t value;  // expected Value (rounded away from zero)
  F format;
};

TEST(QuantityTest, ParsesValuesAndFormats) {
  const ParseCase cases[] = {
      {"0", 0, 0, F::kDecimalSI},
      {"0n", 0, 0, F::kDecimalSI},
      {"0Ki", 0, 0, F::kBinarySI},
      {"0Mi", 0, 0, F::kBinarySI},
      {"1", 1000, 1, F::kDecimalSI},
      {"1Ki", 1024000, 1024, F::kBinarySI},
      {"8Ki", 8 * 1024000, 8 * 1024, F::kBinarySI},
      {"7Mi", 7340032000, 7340032, F::kBinarySI},
      {"6Gi", 6442450944000, 6442450944, F::kBinarySI},
      {"5n", 1, 1, F::kDecimalSI},
      {"4u", 1, 1, F::kDecimalSI},
      {"3m", 3, 1, F::kDecimalSI},
      {"8k", 8000000, 8000, F::kDecimalSI},
      {"50k", 50000000, 50000, F::kDecimalSI},
      {"7M", 7000000000, 7000000, F::kDecimalSI},
      {"1E-3", 1, 1, F::kDecimalExponent},
      {"1e3", 1000000, 1000, F::kDecimalExponent},
      {"1E6", 1000000000, 1000000, F::kDecimalExponent},
      {"100.035k", 100035000, 100035, F::kDecimalSI},
      {"0.001", 1, 1, F::kDecimalSI},
      {"0.0005k", 500, 1, F::kDecimalSI},
      {"0.5", 500, 1, F::kDecimalSI},
      {"0.5e-1", 50, 1, F::kDecimalExponent},
      {"1.2e3", 1200000, 1200, F::kDecimalExponent},
      {"1.3E+6", 1300000000, 1300000, F::kDecimalExponent},
      {"9.01", 9010, 10, F::kDecimalSI},
      {"8.1k", 8100000, 8100, F::kDecimalSI},
      {"3.001n", 1, 1, F::kDecimalSI},
      {"100.035Ki", 102435840, 102436, F::kBinarySI},
      {"0.5Mi", 524288000, 524288, F::kBinarySI},
      {"0.000000000001Ki", 1, 1, F::kDecimalSI},  // rounds up to 2n and leaves BinarySI
      {".001", 1, 1, F::kDecimalSI},
      {".0001k", 100, 1, F::kDecimalSI},
      {"1.", 1000, 1, F::kDecimalSI},
      {"1.G", 1000000000000, 1000000000, F::kDecimalSI},
      {"+1.5", 1500, 2, F::kDecimalSI},
      {"-1.5", -1500, -2, F::kDecimalSI},
      {"-0.1m", -1, -1, F::kDecimalSI},
      {".", 0, 0, F::kDecimalSI},
      {"-.", 0, 0, F::kDecimalSI},
  };
  for (const auto& c : cases) {
    Quantity q = MustParse(c.in);
    EXPECT_EQ(q.MilliValue(), c.milli) << c.in;
    EXPECT_EQ(q.Value(), c.value) << c.in;
    EXPECT_EQ(q.format(), c.format) << c.in;
  }
}

TEST(QuantityTest, SubNanoValuesRoundUpToOneNano) {
  const std::string cases[] = {"0.0000000001", "0.0000000005", "0.00000000050", "0.5e-9", "0.9n"};
  for (const auto& c : cases) {
    EXPECT_EQ(MustParse(c), MustParse("1n")) << c;
  }
  EXPECT_EQ(MustParse("0.00000012345"), MustParse("124n"));
  EXPECT_EQ(MustParse("0.00000012354"), MustParse("124n"));
  EXPECT_EQ(MustParse("1.1E-9"), MustParse("2n"));
}

TEST(QuantityTest, EquivalentSpellingsCompareEqual) {
  EXPECT_EQ(MustParse("1Gi"), MustParse("1024Mi"));
  EXPECT_EQ(MustParse("1.5"), MustParse("1500m"));
  EXPECT_EQ(MustParse("1e3"), MustParse("1k"));
  EXPECT_EQ(MustParse("0.05Gi"), MustParse("53687091.2"));
  EXPECT_LT(MustParse("100Gi"), MustParse("10000T"));
  EXPECT_GT(MustParse("100m"), MustParse("50m"));
}

TEST(QuantityTest, RejectsInvalidText) {
  const std::string cases[] = {"",    "1.1.M",        "1+1.0M",  "0.1mi", "0.1am", "aoeu", ".5i",
                               "1i",  "-3.01i",       "-3.01e-", " 1",    "1 ",    "1x",   "1K",
                               "1KB", "1e4294967297", "e",       "1Mi2",  "1e1.5", "--1",  "1ki"};
  for (const auto& c : cases) {
    auto q = Quantity::Parse(c);
    EXPECT_FALSE(q.ok()) << "parsed unexpectedly: \"" << c << "\"";
  }
  auto bad = Quantity::Parse("1x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "invalid quantity \"1x\"");
}

TEST(QuantityTest, CanonicalString) {
  const std::pair<std::string, std::string> cases[] = {
      {"1Ki", "1Ki"},
      {"1Mi", "1Mi"},
      {"1024Mi", "1Gi"},
      {"307200Ki", "300Mi"},
      {"1025024Mi", "1001Gi"},
      {"1024Gi", "1Ti"},
      {"1000M", "1G"},
      {"0.001T", "1G"},
      {"1000u", "1m"},
      {"1.08", "1080m"},
      {"1080000000n", "1080m"},
      {"1500m", "1500m"},
      {"1.5", "1500m"},
      {"1000", "1k"},
      {"0.1", "100m"},
      {"100M", "100M"},
      {"1e3", "1e3"},
      {".001e12", "1e9"},
      {"0.001e0", "1e-3"},
      {"1000e-12", "1e-9"},
      {"80e-3", "80e-3"},
      {"1e4", "10e3"},
      {"0.5e0", "500e-3"},
      {"00", "0"},
      {"0Ki", "0"},
      {".001Ki", "1024m"},
      {".000001Ki", "1024u"},
      {".000000001Ki", "1024n"},
      {".000000000001Ki", "2n"},
      {"0.5Ki", "512"},
      {"1.5Gi", "1536Mi"},
      {"1025", "1025"},
      {"1234567M", "1234567M"},
      {"1000E", "1e21"},
      {"5000E", "5e21"},
      {"100Ki", "100Ki"},
      {"-1.5", "-1500m"},
      {"-1Gi", "-1Gi"},
      {"-9.01", "-9010m"},
  };
  for (const auto& [in, want] : cases) {
    EXPECT_EQ(MustParse(in).String(), want) << in;
  }
}

TEST(QuantityTest, BinaryValuesBeyondInt64AreCapped) {
  for (const std::string in : {"9Ei", "9223372036854775807Ki"}) {
    Quantity q = MustParse(in);
    EXPECT_EQ(q.Value(), 9223372036854775807LL) << in;
    EXPECT_EQ(q.format(), F::kBinarySI) << in;
    EXPECT_EQ(q.String(), "9223372036854775807") << in;
  }
}

TEST(QuantityTest, DecimalValuesAboveInt64SaturateValue) {
  Quantity q = MustParse("12E");
  EXPECT_EQ(q.Value(), 9223372036854775807LL);
  EXPECT_EQ(q.String(), "12E");
  EXPECT_FALSE(Quantity::Parse("1e40").ok());
}

TEST(QuantityTest, ConstructorsAndArithmetic) {
  Quantity a = Quantity::FromMilli(1500);
  EXPECT_EQ(a.String(), "1500m");
  EXPECT_EQ(a.Value(), 2);
  Quantity b = Quantity::FromInt(2 * 1024 * 1024, F::kBinarySI);
  EXPECT_EQ(b.String(), "2Mi");
  EXPECT_EQ(Quantity::FromInt(2000, F::kBinarySI).String(), "2000");
  a += Quantity::FromMilli(500);
  EXPECT_EQ(a.MilliValue(), 2000);
  EXPECT_EQ(a.String(), "2");
  a -= Quantity::FromInt(3);
  EXPECT_EQ(a.MilliValue(), -1000);
  EXPECT_EQ(a.String(), "-1");
  EXPECT_TRUE(Quantity().IsZero());
  Quantity half_milli = MustParse("0.5m");
  Quantity sum = half_milli;
  sum += half_milli;
  EXPECT_EQ(half_milli.MilliValue(), 1);
  EXPECT_EQ(sum.MilliValue(), 1);
}

}  // namespace
}  // namespace berth
