#include "berth/api/quantity.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace berth {
namespace {

using i128 = __int128;
using u128 = unsigned __int128;

constexpr int64_t kNanosPerUnit = 1'000'000'000;
constexpr int64_t kNanosPerMilli = 1'000'000;

// Magnitudes are limited to 10^36 nanos (10^27 units) so that sums of many quantities cannot
// overflow the 128-bit representation.
constexpr int kMaxDigits = 36;

constexpr i128 Pow10(int n) {
  i128 r = 1;
  for (int i = 0; i < n; ++i) r *= 10;
  return r;
}

constexpr i128 kMaxNanos = Pow10(kMaxDigits);
// Binary-suffixed quantities above 2^63-1 are capped there, as Kubernetes does.
constexpr i128 kMaxBinaryNanos =
    static_cast<i128>(std::numeric_limits<int64_t>::max()) * kNanosPerUnit;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsSuffixLetter(char c) {
  switch (c) {
    case 'e':
    case 'E':
    case 'i':
    case 'n':
    case 'u':
    case 'm':
    case 'k':
    case 'K':
    case 'M':
    case 'G':
    case 'T':
    case 'P':
      return true;
    default:
      return false;
  }
}

struct Lexed {
  bool negative = false;
  std::string_view num;    // integer digits, leading zeros removed (may be empty)
  std::string_view denom;  // fractional digits (may be empty)
  std::string_view suffix;
};

// Splits text into sign, digits and suffix with the same leniency as Kubernetes ("1.", ".5",
// "+.", a bare suffix) and the same rejections (whitespace, letters after the exponent).
bool Lex(std::string_view s, Lexed& out) {
  size_t pos = 0;
  const size_t end = s.size();
  if (pos < end && (s[pos] == '+' || s[pos] == '-')) {
    out.negative = s[pos] == '-';
    ++pos;
  }
  while (pos < end && s[pos] == '0') ++pos;
  if (pos == end) return true;  // all zeros (or just a sign): zero
  size_t start = pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  out.num = s.substr(start, pos - start);
  if (pos < end && s[pos] == '.') {
    ++pos;
    start = pos;
    while (pos < end && IsDigit(s[pos])) ++pos;
    out.denom = s.substr(start, pos - start);
  }
  const size_t suffix_start = pos;
  while (pos < end && IsSuffixLetter(s[pos])) ++pos;
  if (pos < end && (s[pos] == '+' || s[pos] == '-')) ++pos;
  while (pos < end && IsDigit(s[pos])) ++pos;
  if (pos != end) return false;
  out.suffix = s.substr(suffix_start);
  return true;
}

struct Suffix {
  int base = 10;  // 10 or 2
  int64_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

// Parses a base-10 integer the way strconv.ParseInt does (optional sign, digits only).
bool ParseInt64(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  bool neg = false;
  size_t i = 0;
  if (s[0] == '+' || s[0] == '-') {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return false;
  u128 v = 0;
  for (; i < s.size(); ++i) {
    if (!IsDigit(s[i])) return false;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
    if (v > static_cast<u128>(std::numeric_limits<int64_t>::max()) + 1) return false;
  }
  if (!neg && v > static_cast<u128>(std::numeric_limits<int64_t>::max())) return false;
  out = neg ? static_cast<int64_t>(-static_cast<i128>(v)) : static_cast<int64_t>(v);
  return true;
}

bool InterpretSuffix(std::string_view s, Suffix& out) {
  using F = Quantity::Format;
  struct Entry {
    std::string_view text;
    int base;
    int exponent;
    F format;
  };
  static constexpr Entry kTable[] = {
      {"", 10, 0, F::kDecimalSI},   {"n", 10, -9, F::kDecimalSI}, {"u", 10, -6, F::kDecimalSI},
      {"m", 10, -3, F::kDecimalSI}, {"k", 10, 3, F::kDecimalSI},  {"M", 10, 6, F::kDecimalSI},
      {"G", 10, 9, F::kDecimalSI},  {"T", 10, 12, F::kDecimalSI}, {"P", 10, 15, F::kDecimalSI},
      {"E", 10, 18, F::kDecimalSI}, {"Ki", 2, 10, F::kBinarySI},  {"Mi", 2, 20, F::kBinarySI},
      {"Gi", 2, 30, F::kBinarySI},  {"Ti", 2, 40, F::kBinarySI},  {"Pi", 2, 50, F::kBinarySI},
      {"Ei", 2, 60, F::kBinarySI},
  };
  for (const Entry& e : kTable) {
    if (e.text == s) {
      out = {e.base, e.exponent, e.format};
      return true;
    }
  }
  if (s.size() > 1 && (s[0] == 'e' || s[0] == 'E')) {
    int64_t exp = 0;
    if (!ParseInt64(s.substr(1), exp)) return false;
    // The exponent must survive negation as a 32-bit scale.
    if (exp > std::numeric_limits<int32_t>::max() || exp < -std::numeric_limits<int32_t>::max()) {
      return false;
    }
    out = {10, exp, F::kDecimalExponent};
    return true;
  }
  return false;
}

// Multiplies a big-endian decimal digit string by 2^bits in place.
void MultiplyByPowerOfTwo(std::string& digits, int bits) {
  while (bits > 0) {
    const int step = std::min(bits, 20);
    bits -= step;
    const uint64_t factor = uint64_t{1} << step;
    uint64_t carry = 0;
    for (size_t i = digits.size(); i-- > 0;) {
      const uint64_t v = static_cast<uint64_t>(digits[i] - '0') * factor + carry;
      digits[i] = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    std::string head;
    while (carry > 0) {
      head.push_back(static_cast<char>('0' + carry % 10));
      carry /= 10;
    }
    std::reverse(head.begin(), head.end());
    digits.insert(0, head);
  }
}

enum class ScaleResult { kOk, kTooLarge };

// Computes digits * 10^exp10 in nanos-sized integer units, rounding any fraction away from zero.
// `digits` has no leading zeros and is non-empty.
ScaleResult ScaleDigits(std::string_view digits, int64_t exp10, i128& out) {
  while (digits.size() > 1 && digits.back() == '0') {
    digits.remove_suffix(1);
    ++exp10;
  }
  if (exp10 >= 0) {
    if (static_cast<int64_t>(digits.size()) + exp10 > kMaxDigits + 1) return ScaleResult::kTooLarge;
    i128 v = 0;
    for (char c : digits) v = v * 10 + (c - '0');
    for (int64_t i = 0; i < exp10; ++i) v *= 10;
    if (v > kMaxNanos) return ScaleResult::kTooLarge;
    out = v;
    return ScaleResult::kOk;
  }
  const int64_t drop = -exp10;
  if (drop >= static_cast<int64_t>(digits.size())) {
    out = 1;  // a non-zero value below one unit rounds up to one
    return ScaleResult::kOk;
  }
  std::string_view whole = digits.substr(0, digits.size() - static_cast<size_t>(drop));
  if (static_cast<int>(whole.size()) > kMaxDigits + 1) return ScaleResult::kTooLarge;
  i128 v = 0;
  for (char c : whole) v = v * 10 + (c - '0');
  // Trailing zeros were stripped, so the dropped part is non-zero.
  v += 1;
  if (v > kMaxNanos) return ScaleResult::kTooLarge;
  out = v;
  return ScaleResult::kOk;
}

Error InvalidQuantity(std::string_view text, std::string_view why = {}) {
  std::string msg = "invalid quantity \"";
  msg.append(text);
  msg.push_back('"');
  if (!why.empty()) {
    msg.append(": ");
    msg.append(why);
  }
  return Error{std::move(msg)};
}

void AppendInt128(std::string& out, i128 v) {
  if (v < 0) {
    out.push_back('-');
    v = -v;
  }
  char buf[48];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v > 0);
  while (n > 0) out.push_back(buf[--n]);
}

// Rounds nanos / divisor away from zero and saturates to int64.
int64_t ScaledRoundUp(i128 nanos, int64_t divisor) {
  i128 q = nanos / divisor;
  if (nanos % divisor != 0) q += nanos > 0 ? 1 : -1;
  if (q > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (q < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(q);
}

std::string_view DecimalSISuffix(int exponent, bool& ok) {
  ok = true;
  switch (exponent) {
    case -9:
      return "n";
    case -6:
      return "u";
    case -3:
      return "m";
    case 0:
      return "";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      ok = false;
      return "";
  }
}

// Base-10 canonical form: mantissa with the exponent lowered to a multiple of three, the
// exponent as large as possible without losing precision.
std::string FormatDecimal(i128 nanos, bool exponent_notation) {
  i128 mantissa = nanos;
  int exponent = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  // Exponents here are >= -9, so a C++ remainder of 1 or 2 means "round down to a multiple of
  // three"; negative remainders arise for -8, -7, -5, ...
  int rem = ((exponent % 3) + 3) % 3;
  for (int i = 0; i < rem; ++i) {
    mantissa *= 10;
    --exponent;
  }
  std::string out;
  AppendInt128(out, mantissa);
  if (!exponent_notation) {
    bool ok = false;
    std::string_view suffix = DecimalSISuffix(exponent, ok);
    if (ok) {
      out.append(suffix);
      return out;
    }
  }
  if (exponent != 0) {
    out.push_back('e');
    out.append(std::to_string(exponent));
  }
  return out;
}

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  if (text.empty()) return InvalidQuantity(text);
  Lexed lx;
  if (!Lex(text, lx)) return InvalidQuantity(text);
  Suffix sfx;
  if (!InterpretSuffix(lx.suffix, sfx)) return InvalidQuantity(text);

  Quantity q;
  q.format_ = sfx.format;

  // Significant digits of num.denom (leading zeros of the fraction included in the scale).
  std::string digits;
  digits.reserve(lx.num.size() + lx.denom.size());
  digits.append(lx.num);
  digits.append(lx.denom);
  size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return q;  // zero keeps the parsed format
  digits.erase(0, first);

  int64_t exp10 = 9 - static_cast<int64_t>(lx.denom.size());
  if (sfx.base == 10) {
    exp10 += sfx.exponent;
  } else {
    MultiplyByPowerOfTwo(digits, static_cast<int>(sfx.exponent));
  }
  i128 nanos = 0;
  if (ScaleDigits(digits, exp10, nanos) == ScaleResult::kTooLarge) {
    if (sfx.base != 2) return InvalidQuantity(text, "value out of range");
    nanos = kMaxBinaryNanos;
  }
  if (sfx.base == 2) {
    nanos = std::min(nanos, kMaxBinaryNanos);
    // Binary formatting of a fraction below one would be misleading.
    if (nanos < kNanosPerUnit) q.format_ = Format::kDecimalSI;
  }
  q.nanos_ = lx.negative ? -nanos : nanos;
  return q;
}

Quantity Quantity::FromMilli(int64_t milli, Format f) {
  Quantity q;
  q.nanos_ = static_cast<i128>(milli) * kNanosPerMilli;
  q.format_ = f;
  return q;
}

Quantity Quantity::FromInt(int64_t value, Format f) {
  Quantity q;
  q.nanos_ = static_cast<i128>(value) * kNanosPerUnit;
  q.format_ = f;
  return q;
}

int64_t Quantity::Value() const { return ScaledRoundUp(nanos_, kNanosPerUnit); }

int64_t Quantity::MilliValue() const { return ScaledRoundUp(nanos_, kNanosPerMilli); }

std::string Quantity::String() const {
  if (nanos_ == 0) return "0";
  switch (format_) {
    case Format::kDecimalExponent:
      return FormatDecimal(nanos_, /*exponent_notation=*/true);
    case Format::kDecimalSI:
      return FormatDecimal(nanos_, /*exponent_notation=*/false);
    case Format::kBinarySI:
      break;
  }
  const i128 unit_limit = static_cast<i128>(1024) * kNanosPerUnit;
  // Small or fractional binary values print in decimal SI so that no precision is lost.
  if ((nanos_ > -unit_limit && nanos_ < unit_limit) || nanos_ % kNanosPerUnit != 0) {
    return FormatDecimal(nanos_, /*exponent_notation=*/false);
  }
  i128 units = nanos_ / kNanosPerUnit;
  int power = 0;
  i128 mag = units < 0 ? -units : units;
  while (mag >= 1024 && mag % 1024 == 0) {
    mag /= 1024;
    ++power;
  }
  if (power > 6) return FormatDecimal(nanos_, /*exponent_notation=*/true);
  static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  std::string out;
  AppendInt128(out, units < 0 ? -mag : mag);
  out.append(kBinary[power]);
  return out;
}

}  // namespace berth
