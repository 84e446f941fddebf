#include "cel/lexer.h"

#include <optional>

namespace berth::cel {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
int HexVal(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

void AppendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {

// The token of a one-character bracket, separator or arithmetic operator, if c is one.
std::optional<Tok> OneCharToken(char c) {
  switch (c) {
    case '(':
      return Tok::kLParen;
    case ')':
      return Tok::kRParen;
    case '[':
      return Tok::kLBracket;
    case ']':
      return Tok::kRBracket;
    case '{':
      return Tok::kLBrace;
    case '}':
      return Tok::kRBrace;
    case '.':
      return Tok::kDot;
    case ',':
      return Tok::kComma;
    case ':':
      return Tok::kColon;
    case '?':
      return Tok::kQuestion;
    case '+':
      return Tok::kPlus;
    case '-':
      return Tok::kMinus;
    case '*':
      return Tok::kStar;
    case '/':
      return Tok::kSlash;
    case '%':
      return Tok::kPercent;
    default:
      return std::nullopt;
  }
}

}  // namespace

void Lexer::SkipSpaceAndComments() {
  while (i_ < src_.size()) {
    char c = src_[i_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++i_;
    } else if (c == '/' && i_ + 1 < src_.size() && src_[i_ + 1] == '/') {
      while (i_ < src_.size() && src_[i_] != '\n') ++i_;
    } else {
      break;
    }
  }
}

Token Lexer::Next() {
  SkipSpaceAndComments();
  uint32_t start = static_cast<uint32_t>(i_);
  if (i_ >= src_.size()) return Token{Tok::kEnd, start, {}};
  char c = src_[i_];
  char n = i_ + 1 < src_.size() ? src_[i_ + 1] : '\0';
  if (IsDigit(c) || (c == '.' && IsDigit(n))) return Number();
  if (c == '"' || c == '\'') return Quoted(start, false, false);
  if (c == '`') return QuotedField(start);
  if (IsIdentStart(c)) return IdentOrPrefixedString(start);
  return Operator(start, c, n);
}

Token Lexer::QuotedField(uint32_t start) {
  size_t end = src_.find('`', i_ + 1);
  if (end == std::string_view::npos || end == i_ + 1) return Err(start, "invalid quoted field");
  std::string text(src_.substr(i_ + 1, end - i_ - 1));
  for (char ch : text) {
    bool ok = IsIdentStart(ch) || IsDigit(ch) || ch == '.' || ch == '-' || ch == '/' || ch == ' ';
    if (!ok) return Err(start, "invalid character in quoted field");
  }
  i_ = end + 1;
  return Token{Tok::kQuotedIdent, start, std::move(text)};
}

Token Lexer::IdentOrPrefixedString(uint32_t start) {
  // String and bytes prefixes: r, b, rb, br in either case, directly before a quote.
  size_t j = i_;
  bool raw = false, bytes = false;
  while (j < src_.size() && j - i_ < 2) {
    char p = src_[j];
    if ((p == 'r' || p == 'R') && !raw) {
      raw = true;
    } else if ((p == 'b' || p == 'B') && !bytes) {
      bytes = true;
    } else {
      break;
    }
    ++j;
  }
  if (j > i_ && j < src_.size() && (src_[j] == '"' || src_[j] == '\'')) {
    i_ = j;
    return Quoted(start, raw, bytes);
  }
  while (i_ < src_.size() && (IsIdentStart(src_[i_]) || IsDigit(src_[i_]))) ++i_;
  return Token{Tok::kIdent, start, std::string(src_.substr(start, i_ - start))};
}

Token Lexer::Operator(uint32_t start, char c, char n) {
  auto two = [&](char second, Tok yes, Tok no) {
    if (n == second) {
      i_ += 2;
      return Token{yes, start, {}};
    }
    ++i_;
    return Token{no, start, {}};
  };
  switch (c) {
    case '!':
      return two('=', Tok::kNe, Tok::kNot);
    case '<':
      return two('=', Tok::kLe, Tok::kLt);
    case '>':
      return two('=', Tok::kGe, Tok::kGt);
    case '=':
    case '&':
    case '|':
      // Only doubled: ==, &&, ||.
      if (n == c) {
        i_ += 2;
        return Token{c == '=' ? Tok::kEq : c == '&' ? Tok::kAnd : Tok::kOr, start, {}};
      }
      break;
    default:
      if (std::optional<Tok> t = OneCharToken(c)) {
        ++i_;
        return Token{*t, start, {}};
      }
      break;
  }
  return Err(start, std::string("token recognition error at: '") + c + "'");
}

Token Lexer::Number() {
  uint32_t start = static_cast<uint32_t>(i_);
  if (src_[i_] == '0' && i_ + 1 < src_.size() && (src_[i_ + 1] == 'x' || src_[i_ + 1] == 'X')) {
    i_ += 2;
    size_t digits = i_;
    while (i_ < src_.size() && IsHex(src_[i_])) ++i_;
    if (i_ == digits) return Err(start, "invalid hexadecimal literal");
    std::string text(src_.substr(start, i_ - start));
    if (i_ < src_.size() && (src_[i_] == 'u' || src_[i_] == 'U')) {
      ++i_;
      return Token{Tok::kUint, start, text};
    }
    return Token{Tok::kInt, start, text};
  }
  bool is_double = false;
  while (i_ < src_.size() && IsDigit(src_[i_])) ++i_;
  if (i_ + 1 < src_.size() && src_[i_] == '.' && IsDigit(src_[i_ + 1])) {
    is_double = true;
    ++i_;
    while (i_ < src_.size() && IsDigit(src_[i_])) ++i_;
  }
  if (i_ < src_.size() && (src_[i_] == 'e' || src_[i_] == 'E')) {
    size_t j = i_ + 1;
    if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) ++j;
    if (j < src_.size() && IsDigit(src_[j])) {
      is_double = true;
      i_ = j;
      while (i_ < src_.size() && IsDigit(src_[i_])) ++i_;
    }
  }
  std::string text(src_.substr(start, i_ - start));
  if (is_double) return Token{Tok::kDouble, start, text};
  if (i_ < src_.size() && (src_[i_] == 'u' || src_[i_] == 'U')) {
    ++i_;
    return Token{Tok::kUint, start, text};
  }
  return Token{Tok::kInt, start, text};
}

Token Lexer::Quoted(uint32_t start, bool raw, bool bytes) {
  char q = src_[i_];
  bool triple = i_ + 2 < src_.size() && src_[i_ + 1] == q && src_[i_ + 2] == q;
  i_ += triple ? 3 : 1;
  std::string out;
  while (true) {
    if (i_ >= src_.size()) return Err(start, "unterminated string literal");
    char c = src_[i_];
    if (c == q) {
      if (!triple) {
        ++i_;
        break;
      }
      if (i_ + 2 < src_.size() && src_[i_ + 1] == q && src_[i_ + 2] == q) {
        i_ += 3;
        break;
      }
    }
    if (!triple && (c == '\n' || c == '\r')) return Err(start, "newline in string literal");
    if (c == '\\' && !raw) {
      std::string err;
      if (!Escape(out, bytes, err)) return Err(static_cast<uint32_t>(i_), err);
      continue;
    }
    out += c;
    ++i_;
  }
  return Token{bytes ? Tok::kBytes : Tok::kString, start, std::move(out)};
}

// Decodes one escape sequence at i_ (which is at the backslash).
bool Lexer::Escape(std::string& out, bool bytes, std::string& err) {
  if (i_ + 1 >= src_.size()) {
    err = "invalid escape sequence";
    return false;
  }
  char e = src_[i_ + 1];
  i_ += 2;
  switch (e) {
    case 'a':
      out += '\a';
      return true;
    case 'b':
      out += '\b';
      return true;
    case 'f':
      out += '\f';
      return true;
    case 'n':
      out += '\n';
      return true;
    case 'r':
      out += '\r';
      return true;
    case 't':
      out += '\t';
      return true;
    case 'v':
      out += '\v';
      return true;
    case '\\':
      out += '\\';
      return true;
    case '?':
      out += '?';
      return true;
    case '"':
      out += '"';
      return true;
    case '\'':
      out += '\'';
      return true;
    case '`':
      out += '`';
      return true;
    default:
      break;
  }
  auto read_hex = [&](int digits, uint32_t& cp) {
    cp = 0;
    for (int k = 0; k < digits; ++k) {
      if (i_ >= src_.size() || !IsHex(src_[i_])) return false;
      cp = cp * 16 + HexVal(src_[i_++]);
    }
    return true;
  };
  uint32_t cp = 0;
  if (e == 'x' || e == 'X') {
    if (!read_hex(2, cp)) {
      err = "invalid \\x escape";
      return false;
    }
  } else if (e == 'u' || e == 'U') {
    if (bytes || !read_hex(e == 'u' ? 4 : 8, cp) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp < 0xE000)) {
      err = "invalid unicode escape";
      return false;
    }
    AppendUtf8(out, cp);
    return true;
  } else if (e >= '0' && e <= '3') {
    cp = e - '0';
    for (int k = 0; k < 2; ++k) {
      if (i_ >= src_.size() || src_[i_] < '0' || src_[i_] > '7') {
        err = "invalid octal escape";
        return false;
      }
      cp = cp * 8 + (src_[i_++] - '0');
    }
  } else {
    err = std::string("invalid escape sequence '\\") + e + "'";
    return false;
  }
  // \x and octal escapes are a byte in bytes literals and a code point in strings.
  if (bytes) {
    out += static_cast<char>(cp);
  } else {
    AppendUtf8(out, cp);
  }
  return true;
}

}  // namespace berth::cel
