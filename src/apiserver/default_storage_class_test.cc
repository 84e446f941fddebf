#include "apiserver/default_storage_class.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

class DefaultStorageClassTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("berth-default-sc-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    auto s = Store::Open({.path = (dir_ / "state.db").string()});
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(s).value();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void AddClass(const std::string& name, bool is_default) {
    Json sc = {{"metadata", {{"name", name}}}, {"provisioner", "berth.dev/local"}};
    if (is_default)
      sc["metadata"]["annotations"] = {{"storageclass.kubernetes.io/is-default-class", "true"}};
    ASSERT_TRUE(
        store_->Create(*FindResource("storage.k8s.io", "v1", "storageclasses"), "", sc, false)
            .ok());
  }
  Json Admitted(Json pvc) {
    AdmitDefaultStorageClass(*store_, pvc);
    return pvc;
  }
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

const Json kClaim = {{"metadata", {{"name", "data"}}},
                     {"spec", {{"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};

TEST_F(DefaultStorageClassTest, ClaimWithoutClassGetsTheDefault) {
  AddClass("plain", false);
  EXPECT_FALSE(Admitted(kClaim)["spec"].contains("storageClassName"));  // no default yet
  AddClass("standard", true);
  EXPECT_EQ(Admitted(kClaim)["spec"]["storageClassName"], "standard");
}

TEST_F(DefaultStorageClassTest, ExplicitClassEmptyClassAndBetaAnnotationAreKept) {
  AddClass("standard", true);
  Json named = kClaim;
  named["spec"]["storageClassName"] = "plain";
  EXPECT_EQ(Admitted(named)["spec"]["storageClassName"], "plain");
  Json none = kClaim;
  none["spec"]["storageClassName"] = "";
  EXPECT_EQ(Admitted(none)["spec"]["storageClassName"], "");
  Json beta = kClaim;
  beta["metadata"]["annotations"] = {{"volume.beta.kubernetes.io/storage-class", "old"}};
  EXPECT_FALSE(Admitted(beta)["spec"].contains("storageClassName"));
}

TEST_F(DefaultStorageClassTest, OfSeveralDefaultsTheNewestThenTheFirstByName) {
  // "b" is created first: "a" is newer, or as old and first by name; either way "a".
  AddClass("b-default", true);
  AddClass("a-default", true);
  EXPECT_EQ(Admitted(kClaim)["spec"]["storageClassName"], "a-default");
}

}  // namespace
}  // namespace berth::apiserver
