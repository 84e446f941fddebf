#include "apiserver/admission.h"

#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

VoidResult AdmitNode(const std::string& name) {
  Json node = {{"metadata", {{"name", name}}}};
  return Admit(*FindResource("", "v1", "nodes"), node, true,
               [](const std::string&) { return std::nullopt; });
}

TEST(AdmissionTest, NamesMustBeLowercaseRfc1123Subdomains) {
  for (const char* ok : {"a", "node-1", "a.b-c.d", "0abc9", "x.y"}) {
    EXPECT_TRUE(AdmitNode(ok).ok()) << ok;
  }
  for (const char* bad : {"Node", "-a", "a-", "a..b", ".a", "a.", "a_b", "a.-b", "a b"}) {
    auto r = AdmitNode(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalid) << bad;
    EXPECT_NE(r.error().message.find("metadata.name"), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(AdmitNode(std::string(254, 'a')).ok());
  EXPECT_TRUE(AdmitNode(std::string(253, 'a')).ok());
}

}  // namespace
}  // namespace berth::apiserver
