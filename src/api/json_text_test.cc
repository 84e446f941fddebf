#include "api/json_text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth {
namespace {

using Json = nlohmann::json;

std::string Written(const Json& value) {
  std::string out = "prefix:";
  AppendJson(value, &out);
  return out.substr(7);
}

TEST(JsonTextTest, WritesWhatDumpWrites) {
  const Json docs[] = {
      Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0",)"
                  R"("labels":{"app":"web","z":"","a":"1"},"managedFields":[{"fieldsV1":)"
                  R"({"f:spec":{"f:containers":{"k:{\"name\":\"c\"}":{".":{}}}}}}]},)"
                  R"("spec":{"containers":[{"name":"c","args":[]}],"priority":-5,)"
                  R"("terminationGracePeriodSeconds":30,"enableServiceLinks":true,)"
                  R"("nodeName":null,"overhead":{}}})"),
      Json::parse(R"([0,5,-5,1.0,-2.5e-3,1e100,0.1,9223372036854775807,)"
                  R"(18446744073709551615,-9223372036854775808,true,false,null,"",{},[],[[]]])"),
      Json("quote \" backslash \\ slash / newline \n tab \t cr \r bs \b ff \f nul "
           "\x01\x1f del \x7f caf\xc3\xa9 \xf0\x9f\x98\x80"),
      Json(std::string(300, 'x')),
      Json(std::string("a\0b", 3)),
      Json(42),
      Json(-1),
      Json(2.5),
      Json(nullptr),
      Json::object(),
      Json::array(),
  };
  for (const Json& doc : docs) EXPECT_EQ(Written(doc), doc.dump()) << doc.dump();
}

TEST(JsonTextTest, StringsAreEscapedAsDumpEscapesThem) {
  for (int c = 0; c < 0x80; ++c) {
    const std::string s = std::string("<") + static_cast<char>(c) + ">";
    std::string out;
    AppendJsonString(s, &out);
    EXPECT_EQ(out, Json(s).dump()) << "byte " << c;
  }
  // Long strings are checked eight bytes at a time: each byte at each place of a word, among
  // bytes that need no escape (UTF-8 of é included), and at the tail.
  const std::string plain = "abcdefgh\xc3\xa9ijklmnopqrs";
  for (int c = 0; c < 0x80; ++c) {
    for (size_t at = 0; at < plain.size(); ++at) {
      std::string s = plain;
      s[at] = static_cast<char>(c);
      if (at > 0 && (static_cast<unsigned char>(plain[at]) & 0xc0) == 0x80) continue;
      if ((static_cast<unsigned char>(plain[at]) & 0xe0) == 0xc0) continue;  // keep UTF-8 whole
      std::string out;
      AppendJsonString(s, &out);
      EXPECT_EQ(out, Json(s).dump()) << "byte " << c << " at " << at;
    }
  }
}

}  // namespace
}  // namespace berth
