#include "daemon/up.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "testing/config_helpers.h"

namespace berth::daemon {
namespace {

class UpConfigurationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("berth-up-config-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& text) {
    const std::string path = (dir_ / "config.yaml").string();
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
  Registry registry_ = testing::DefaultPluginsRegistry();
};

TEST_F(UpConfigurationTest, WithoutAFileTheSchedulerIsNotRateLimited) {
  UpOptions options;
  auto c = UpSchedulerConfiguration(options, registry_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->client_connection.qps, 0);  // RestClient::Throttle's "no limit"
  const config::SchedulerConfiguration defaults = config::DefaultConfiguration(registry_);
  ASSERT_EQ(c->profiles.size(), defaults.profiles.size());
  EXPECT_EQ(c->profiles[0].scheduler_name, defaults.profiles[0].scheduler_name);
  EXPECT_EQ(c->client_connection.burst, defaults.client_connection.burst);
}

TEST_F(UpConfigurationTest, AFileKeepsItsClientConnectionAndUpstreamsDefaults) {
  UpOptions options;
  options.config_file =
      Write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n");
  auto c = UpSchedulerConfiguration(options, registry_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->client_connection.qps, 50);
  EXPECT_EQ(c->client_connection.burst, 100);

  options.config_file = Write(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "clientConnection: {qps: 12.5, burst: 7}\n");
  c = UpSchedulerConfiguration(options, registry_);
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->client_connection.qps, 12.5);
  EXPECT_EQ(c->client_connection.burst, 7);
}

TEST_F(UpConfigurationTest, ABadFileIsNamed) {
  UpOptions options;
  options.config_file = Write("apiVersion: kubescheduler.config.k8s.io/v1\nkind: [\n");
  auto c = UpSchedulerConfiguration(options, registry_);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(options.config_file), std::string::npos) << c.error().message;
}

TEST(UpPortTest, APickedPortIsRememberedInTheDataDirectory) {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("berth-port-test-" + std::to_string(::getpid())))
          .string();
  std::filesystem::create_directories(dir);
  EXPECT_EQ(RememberedPort(dir), 0);
  RememberPort(dir, 41234);
  EXPECT_EQ(RememberedPort(dir), 41234);
  RememberPort(dir, 0);  // nonsense is not a port
  EXPECT_EQ(RememberedPort(dir), 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace berth::daemon
