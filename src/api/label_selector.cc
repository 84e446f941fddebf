#include "api/label_selector.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <utility>

#include "api/validation.h"

namespace berth::labels {
namespace {

// The tokens of labels.Parse's lexer.
enum class Token : uint8_t {
  kEnd,
  kClosedPar,
  kComma,
  kDoesNotExist,  // !
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Item {
  Token tok;
  std::string_view literal;
};

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsSpecialSymbol(char c) {
  switch (c) {
    case '=':
    case '!':
    case '(':
    case ')':
    case ',':
    case '>':
    case '<':
      return true;
    default:
      return false;
  }
}

std::optional<Token> SymbolToken(std::string_view s) {
  static constexpr std::pair<std::string_view, Token> kSymbols[] = {
      {")", Token::kClosedPar},     {",", Token::kComma},      {"!", Token::kDoesNotExist},
      {"==", Token::kDoubleEquals}, {"=", Token::kEquals},     {">", Token::kGreaterThan},
      {"<", Token::kLessThan},      {"!=", Token::kNotEquals}, {"(", Token::kOpenPar},
  };
  for (const auto& [text, tok] : kSymbols)
    if (text == s) return tok;
  return std::nullopt;
}

// Splits `s` into tokens: identifiers end at whitespace or a special symbol; a run of special
// symbols is cut at the longest prefix that is an operator.
std::vector<Item> Scan(std::string_view s) {
  std::vector<Item> items;
  size_t pos = 0;
  while (true) {
    while (pos < s.size() && IsWhitespace(s[pos])) ++pos;
    if (pos >= s.size()) break;
    const size_t start = pos;
    if (IsSpecialSymbol(s[pos])) {
      // Every single symbol is a token, so the first one always is.
      Token tok = *SymbolToken(s.substr(pos, 1));
      ++pos;
      while (pos < s.size() && IsSpecialSymbol(s[pos])) {
        auto longer = SymbolToken(s.substr(start, pos + 1 - start));
        if (!longer) break;
        tok = *longer;
        ++pos;
      }
      items.push_back({tok, s.substr(start, pos - start)});
      continue;
    }
    while (pos < s.size() && !IsSpecialSymbol(s[pos]) && !IsWhitespace(s[pos])) ++pos;
    const std::string_view word = s.substr(start, pos - start);
    Token tok = word == "in" ? Token::kIn : word == "notin" ? Token::kNotIn : Token::kIdentifier;
    items.push_back({tok, word});
  }
  items.push_back({Token::kEnd, ""});
  return items;
}

// A field.ErrorList as its aggregate prints: one error alone, several in brackets.
std::string Aggregate(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors[0];
  return fmt::format("[{}]", fmt::join(errors, ", "));
}

struct ParseError {
  std::string message;
  bool in_requirement;  // prefixed "unable to parse requirement: "
};

// labels.Parse's recursive descent over the scanned tokens.
class Parser {
 public:
  explicit Parser(std::vector<Item> items) : items_(std::move(items)) {}

  std::optional<ParseError> Parse(std::vector<Requirement>* out);

 private:
  // In a values context the keywords `in` and `notin` are plain identifiers.
  Item Lookahead(bool values) const { return Contextual(items_[pos_], values); }
  Item Consume(bool values) { return Contextual(items_[pos_++], values); }
  static Item Contextual(Item item, bool values) {
    if (values && (item.tok == Token::kIn || item.tok == Token::kNotIn))
      item.tok = Token::kIdentifier;
    return item;
  }

  std::optional<std::string> ParseRequirement(Requirement* r);
  std::optional<std::string> ParseValues(std::vector<std::string>* values);
  std::optional<std::string> ParseExactValue(std::vector<std::string>* values);

  std::vector<Item> items_;
  size_t pos_ = 0;
};

std::string Found(std::string_view literal, std::string_view expected) {
  return fmt::format("found '{}', expected: {}", literal, expected);
}

std::optional<ParseError> Parser::Parse(std::vector<Requirement>* out) {
  while (true) {
    const Item next = Lookahead(true);
    if (next.tok == Token::kEnd) return std::nullopt;
    if (next.tok != Token::kIdentifier && next.tok != Token::kDoesNotExist) {
      return ParseError{Found(next.literal, "!, identifier, or 'end of string'"), false};
    }
    Requirement r;
    if (auto err = ParseRequirement(&r)) return ParseError{std::move(*err), true};
    out->push_back(std::move(r));
    const Item sep = Consume(true);
    if (sep.tok == Token::kEnd) return std::nullopt;
    if (sep.tok != Token::kComma) {
      return ParseError{Found(sep.literal, "',' or 'end of string'"), false};
    }
    const Item after = Lookahead(true);
    if (after.tok != Token::kIdentifier && after.tok != Token::kDoesNotExist) {
      return ParseError{Found(after.literal, "identifier after ','"), false};
    }
  }
}

std::optional<std::string> Parser::ParseRequirement(Requirement* r) {
  // The key, and the operator when there is none to read (`key`, `!key`).
  Item key = Consume(true);
  const bool not_exists = key.tok == Token::kDoesNotExist;
  if (not_exists) key = Consume(true);
  if (key.tok != Token::kIdentifier) return Found(key.literal, "identifier");
  // The parser checks the key without a field path: kube-apiserver prints it as "<nil>".
  if (std::string problem = validation::QualifiedNameProblem(key.literal); !problem.empty()) {
    return fmt::format("<nil>: Invalid value: \"{}\": {}", key.literal, problem);
  }
  r->key = std::string(key.literal);
  const Token after = Lookahead(true).tok;
  if (not_exists || after == Token::kEnd || after == Token::kComma) {
    r->op = not_exists ? Op::kDoesNotExist : Op::kExists;
    return std::nullopt;
  }
  const Item op = Consume(false);
  std::optional<std::string> err;
  switch (op.tok) {
    case Token::kIn:
    case Token::kNotIn:
      r->op = op.tok == Token::kIn ? Op::kIn : Op::kNotIn;
      err = ParseValues(&r->values);
      break;
    case Token::kEquals:
    case Token::kDoubleEquals:
    case Token::kNotEquals:
    case Token::kGreaterThan:
    case Token::kLessThan:
      r->op = op.tok == Token::kNotEquals     ? Op::kNotIn
              : op.tok == Token::kGreaterThan ? Op::kGt
              : op.tok == Token::kLessThan    ? Op::kLt
                                              : Op::kIn;
      err = ParseExactValue(&r->values);
      break;
    default:
      return Found(op.literal, "in, notin, =, ==, !=, gt, lt");
  }
  if (err) return err;
  std::sort(r->values.begin(), r->values.end());
  r->values.erase(std::unique(r->values.begin(), r->values.end()), r->values.end());
  // What labels.NewRequirement checks of the values (the key passed above).
  std::vector<std::string> errors;
  for (size_t i = 0; i < r->values.size(); ++i) {
    int64_t ignored = 0;
    if ((r->op == Op::kGt || r->op == Op::kLt) && !ParseInt64(r->values[i], ignored)) {
      errors.push_back(fmt::format(
          "values[{}]: Invalid value: \"{}\": for 'Gt', 'Lt' operators, the value must be an "
          "integer",
          i, r->values[i]));
    }
  }
  for (size_t i = 0; i < r->values.size(); ++i) {
    if (std::string problem = validation::LabelValueProblem(r->values[i]); !problem.empty()) {
      errors.push_back(fmt::format("values[{}][{}]: Invalid value: \"{}\": {}", i, r->key,
                                   r->values[i], problem));
    }
  }
  if (!errors.empty()) return Aggregate(errors);
  return std::nullopt;
}

// `(a,b,c)`: empty members are "" (`(a,,b)`, `()`).
std::optional<std::string> Parser::ParseValues(std::vector<std::string>* values) {
  const Item open = Consume(true);
  if (open.tok != Token::kOpenPar) return fmt::format("found '{}' expected: '('", open.literal);
  const Item first = Lookahead(true);
  if (first.tok == Token::kClosedPar) {
    Consume(true);
    values->emplace_back();
    return std::nullopt;
  }
  if (first.tok != Token::kIdentifier && first.tok != Token::kComma) {
    return Found(first.literal, "',', ')' or identifier");
  }
  while (true) {
    const Item item = Consume(true);
    if (item.tok == Token::kIdentifier) {
      values->emplace_back(item.literal);
      const Item next = Lookahead(true);
      if (next.tok == Token::kComma) continue;
      if (next.tok == Token::kClosedPar) break;
      return Found(next.literal, "',' or ')'");
    }
    if (item.tok != Token::kComma) return Found(item.literal, "',', or identifier");
    if (values->empty()) values->emplace_back();
    const Token next = Lookahead(true).tok;
    if (next == Token::kClosedPar) {
      values->emplace_back();
      break;
    }
    if (next == Token::kComma) values->emplace_back();
  }
  Consume(true);  // the ')' seen above
  return std::nullopt;
}

std::optional<std::string> Parser::ParseExactValue(std::vector<std::string>* values) {
  const Token next = Lookahead(true).tok;
  if (next == Token::kEnd || next == Token::kComma) {
    values->emplace_back();
    return std::nullopt;
  }
  const Item value = Consume(true);
  if (value.tok != Token::kIdentifier) return Found(value.literal, "identifier");
  values->emplace_back(value.literal);
  return std::nullopt;
}

}  // namespace

bool ParseInt64(std::string_view s, int64_t& out) {
  if (s.empty()) return false;
  std::string_view digits = s;
  if (digits.front() == '+') digits.remove_prefix(1);
  if (digits.empty()) return false;
  if (digits.front() == '-' && s.front() == '+') return false;
  const char* first = digits.data();
  const char* last = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

Result<std::vector<Requirement>> ParseSelectorText(std::string_view text) {
  std::vector<Requirement> reqs;
  Parser parser(Scan(text));
  if (auto err = parser.Parse(&reqs)) {
    return Error{err->in_requirement ? "unable to parse requirement: " + err->message
                                     : std::move(err->message),
                 ErrorCode::kBadRequest};
  }
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return reqs;
}

}  // namespace berth::labels
