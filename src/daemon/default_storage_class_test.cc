#include "daemon/default_storage_class.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "apiserver/resources.h"

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

}  // namespace
}  // namespace berth::daemon
