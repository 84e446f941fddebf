#include "apiserver/field_errors.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "apiserver/server_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

TEST(FieldErrorsTest, MessageAsErrorsNewInvalidWordsIt) {
  Error one = InvalidObject("Pod", "web", {{FieldErrorType::kRequired, "spec.containers", ""}});
  EXPECT_EQ(one.code, ErrorCode::kInvalid);
  EXPECT_EQ(one.message, "Pod \"web\" is invalid: spec.containers: Required value");
  // Several errors in brackets, each distinct one once.
  ApiError many = InvalidObject(
      "Pod", "web",
      {{FieldErrorType::kInvalid, "metadata.labels", "\"-x\": must start and end, with care"},
       {FieldErrorType::kForbidden, "spec", "may not change"},
       {FieldErrorType::kForbidden, "spec", "may not change"}});
  EXPECT_EQ(many.message,
            "Pod \"web\" is invalid: [metadata.labels: Invalid value: \"-x\": must start and end, "
            "with care, spec: Forbidden: may not change]");
  ASSERT_NE(many.field_errors, nullptr);
  EXPECT_EQ(many.field_errors->size(), 2u);
  // The errors are the error's own: the same code and words made elsewhere carry none.
  EXPECT_EQ(ApiError(Error{many.message, many.code}).field_errors, nullptr);
  // An error at a custom object's root is printed without a field.
  FieldError root{FieldErrorType::kInvalid, "", "\"null\": <root> in body must be of type object",
                  /*bare=*/true};
  EXPECT_EQ(root.ToString(), "Invalid value: \"null\": <root> in body must be of type object");
}

// The Status's causes come from the errors themselves: a detail holding ", " followed by
// something that looks like a field path stays one cause.
TEST(FieldErrorsTest, StatusCausesAreTheErrors) {
  ApiError e = InvalidObject(
      "Deployment.apps", "web",
      {{FieldErrorType::kInvalid, "spec.template.metadata.labels",
        "{\"a\":\"b\"}: `selector` does not match, spec.x: template `labels`"},
       {FieldErrorType::kNotSupported, "spec.strategy.type", "\"x\": supported values: \"A\""},
       {FieldErrorType::kTooLong, "metadata.name", "may not be more than 63 bytes"}});
  Json body = StatusBody(e);
  EXPECT_EQ(body["code"], 422);
  EXPECT_EQ(body["reason"], "Invalid");
  const Json& causes = body["details"]["causes"];
  ASSERT_EQ(causes.size(), 3u) << body.dump();
  EXPECT_EQ(causes[0]["field"], "spec.template.metadata.labels");
  EXPECT_EQ(causes[0]["reason"], "FieldValueInvalid");
  EXPECT_EQ(causes[0]["message"],
            "Invalid value: {\"a\":\"b\"}: `selector` does not match, spec.x: template `labels`");
  EXPECT_EQ(causes[1]["reason"], "FieldValueNotSupported");
  EXPECT_EQ(causes[2]["reason"], "FieldValueTooLong");
  EXPECT_EQ(causes[2]["message"], "Too long: may not be more than 63 bytes");
  // The same words made by hand carry no causes: nothing is read back out of a message.
  Json plain = StatusBody(Error{e.message + " ", ErrorCode::kInvalid});
  EXPECT_FALSE(plain.contains("details") && plain["details"].contains("causes")) << plain.dump();
}

}  // namespace
}  // namespace berth::apiserver
