// Tokens of the CEL grammar. Internal to the parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace berth::cel {

enum class Tok : uint8_t {
  kEnd,
  kError,
  kIdent,
  kQuotedIdent,  // `a.b-c`: a field name in backquotes
  kInt,          // text holds the digits (decimal or 0x-hex), sign not included
  kUint,
  kDouble,
  kString,  // text holds the decoded value
  kBytes,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
  kDot,
  kComma,
  kColon,
  kQuestion,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
};

struct Token {
  Tok kind = Tok::kEnd;
  uint32_t pos = 0;
  std::string text;  // identifier, literal digits, decoded string, or the error message
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}
  Token Next();

 private:
  void SkipSpaceAndComments();
  Token QuotedField(uint32_t start);               // `a.b-c`
  Token IdentOrPrefixedString(uint32_t start);     // name, or r"..", b'..', rb"..", ...
  Token Operator(uint32_t start, char c, char n);  // c: the current character, n: the next
  Token Number();
  Token Quoted(uint32_t start, bool raw, bool bytes);
  bool Escape(std::string& out, bool bytes, std::string& err);
  Token Err(uint32_t pos, std::string msg) { return Token{Tok::kError, pos, std::move(msg)}; }

  std::string_view src_;
  size_t i_ = 0;
};

// Appends the UTF-8 encoding of code point cp.
void AppendUtf8(std::string& out, uint32_t cp);

}  // namespace berth::cel
