// Shared by the controllers' tests, which drive a controller through a real API server and
// informers and so observe its effects asynchronously.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "client/rest_client.h"

namespace berth::controllers {

// Waits (bounded, about 10 s) for a condition the informers will reach; fails the test when it
// is not reached.
inline void WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 1000 && !done(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(done());
}

// Creates namespace `name` (tests of what controllers do in a namespace being deleted).
inline void CreateNamespace(client::RestClient& rest, const std::string& name) {
  auto created =
      rest.Post("/api/v1/namespaces",
                {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}});
  ASSERT_TRUE(created.ok()) << created.error().message;
}

}  // namespace berth::controllers
