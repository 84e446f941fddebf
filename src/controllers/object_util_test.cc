#include "controllers/object_util.h"

#include <gtest/gtest.h>

namespace berth::controllers {
namespace {

TEST(IsNamespaceTerminatingTest, ReadsTheStatusCauseNotTheMessage) {
  client::ClientError e(
      Error{"pods \"x\" is forbidden: unable to create new content in namespace team because it "
            "is being terminated",
            ErrorCode::kForbidden});
  // The message alone (another server's wording, a quota, an admission webhook) is not enough.
  EXPECT_FALSE(IsNamespaceTerminating(e));
  e.causes.push_back({"FieldValueForbidden", "other", "spec"});
  EXPECT_FALSE(IsNamespaceTerminating(e));
  e.causes.push_back(
      {"NamespaceTerminating", "namespace team is being terminated", "metadata.namespace"});
  EXPECT_TRUE(IsNamespaceTerminating(e));
}

TEST(IsNamespaceTerminatingTest, ErrorsFromTheServersStatusCarryTheCause) {
  const char* body =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"refused",)"
      R"("reason":"Forbidden","details":{"name":"x","kind":"pods","causes":[)"
      R"({"reason":"NamespaceTerminating","message":"namespace team is being terminated",)"
      R"("field":"metadata.namespace"}]},"code":403})";
  EXPECT_TRUE(IsNamespaceTerminating(client::ErrorFromResponse(403, body, "create pod")));
  EXPECT_FALSE(IsNamespaceTerminating(client::ErrorFromResponse(
      403, R"({"kind":"Status","message":"refused","reason":"Forbidden","code":403})", "x")));
}

}  // namespace
}  // namespace berth::controllers
