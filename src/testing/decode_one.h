// Tests' decoding of one object from YAML or JSON text: the first object of `text`, of type T,
// with a test failure (and null) when the text does not decode or holds another kind.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <variant>

#include "api/codec.h"

namespace berth::testing {

template <class T>
std::shared_ptr<const T> DecodeOne(const std::string& text) {
  auto objs = DecodeObjects(text, "test");
  EXPECT_TRUE(objs.ok()) << objs.error().message;
  if (!objs.ok() || objs->empty()) return nullptr;
  auto* p = std::get_if<std::shared_ptr<const T>>(&objs->at(0));
  EXPECT_NE(p, nullptr) << text;
  return p ? *p : nullptr;
}

}  // namespace berth::testing
