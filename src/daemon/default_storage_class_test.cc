#include "daemon/default_storage_class.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "apiserver/resources.h"
#include "client/api_server_test_util.h"

namespace berth::daemon {
namespace {

TEST(DefaultStorageClassTest, CreatedOnceAsTheDefaultWaitForFirstConsumerClass) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("berth-daemon-sc-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  {
    auto store = apiserver::Store::Open({.path = (dir / "state.db").string()});
    ASSERT_TRUE(store.ok()) << store.error().message;
    ASSERT_TRUE(CreateDefaultStorageClass(**store).ok());
    // Again (a class of that name exists): no error, nothing changed.
    ASSERT_TRUE(CreateDefaultStorageClass(**store).ok());
    const auto* classes = apiserver::FindResource("storage.k8s.io", "v1", "storageclasses");
    auto got = (*store)->Get(*classes, "", "standard");
    ASSERT_TRUE(got.ok()) << got.error().message;
    const nlohmann::json& sc = *got->object;
    EXPECT_EQ(sc["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"], "true");
    EXPECT_EQ(sc["provisioner"], "berth.dev/local");
    EXPECT_EQ(sc["volumeBindingMode"], "WaitForFirstConsumer");
    EXPECT_EQ(sc["reclaimPolicy"], "Delete");
    auto all = (*store)->List(*classes, "", {}, 0, "");
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->items.size(), 1u);
  }
  std::filesystem::remove_all(dir);
}

std::vector<std::string> ClassNames(client::RestClient& rest) {
  std::vector<std::string> names;
  auto list = rest.Get("/apis/storage.k8s.io/v1/storageclasses");
  EXPECT_TRUE(list.ok());
  if (list.ok())
    for (const auto& sc : (*list)["items"]) names.push_back(sc["metadata"]["name"]);
  return names;
}

TEST(DefaultStorageClassTest, EnsuredThroughTheApiUnlessAClassIsAlreadyTheDefault) {
  controllers::TestApiServer server;
  server.Start("berth-daemon-sc-rest-test");
  client::RestClient& rest = *server.rest();
  // No class: `standard` is created, once.
  auto created = EnsureDefaultStorageClass(rest);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_TRUE(*created);
  auto again = EnsureDefaultStorageClass(rest);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(ClassNames(rest), std::vector<std::string>{"standard"});
  // Another class is the default: nothing is added, even once `standard` is gone.
  ASSERT_TRUE(rest.Delete("/apis/storage.k8s.io/v1/storageclasses/standard").ok());
  nlohmann::json fast = DefaultStorageClass();
  fast["metadata"] = {
      {"name", "fast"},
      {"annotations", {{"storageclass.beta.kubernetes.io/is-default-class", "true"}}}};
  fast["provisioner"] = "example.com/fast";
  ASSERT_TRUE(rest.Post("/apis/storage.k8s.io/v1/storageclasses", fast).ok());
  auto kept = EnsureDefaultStorageClass(rest);
  ASSERT_TRUE(kept.ok());
  EXPECT_FALSE(*kept);
  EXPECT_EQ(ClassNames(rest), std::vector<std::string>{"fast"});
  server.Stop();
}

}  // namespace
}  // namespace berth::daemon
