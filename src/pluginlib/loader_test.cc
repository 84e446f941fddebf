#include "pluginlib/loader.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace berth::pluginlib {
namespace {

using ::testing::HasSubstr;

TEST(CheckBuildInfoTest, SameToolchainIsAccepted) {
  EXPECT_TRUE(CheckBuildInfo(BinaryBuildInfo(), BinaryBuildInfo()).ok());
}

TEST(CheckBuildInfoTest, MinorCompilerVersionIsNotCompared) {
  BerthPluginBuildInfo lib = BinaryBuildInfo();
  lib.compiler_minor += 1;
  EXPECT_TRUE(CheckBuildInfo(lib, BinaryBuildInfo()).ok());
}

TEST(CheckBuildInfoTest, EachMismatchIsRefusedNamingBothSides) {
  const BerthPluginBuildInfo self = BinaryBuildInfo();
  const std::string self_compiler = self.compiler;
  struct Case {
    const char* what;
    void (*change)(BerthPluginBuildInfo*);
  };
  const Case cases[] = {
      {"compiler", [](BerthPluginBuildInfo* b) { b->compiler = "othercc"; }},
      {"compiler major", [](BerthPluginBuildInfo* b) { b->compiler_major += 1; }},
      {"cxx11 abi", [](BerthPluginBuildInfo* b) { b->cxx11_abi = 1 - b->cxx11_abi; }},
      {"libstdc++ major", [](BerthPluginBuildInfo* b) { b->libstdcxx_major += 1; }},
      {"newer sdk version", [](BerthPluginBuildInfo* b) { b->sdk_version += 1; }},
      {"sdk version before the oldest compatible",
       [](BerthPluginBuildInfo* b) { b->sdk_version = kOldestCompatibleSdkVersion - 1; }},
  };
  for (const Case& c : cases) {
    BerthPluginBuildInfo lib = self;
    c.change(&lib);
    VoidResult r = CheckBuildInfo(lib, self);
    ASSERT_FALSE(r.ok()) << c.what;
    EXPECT_THAT(r.error().message, HasSubstr("this berth is built with " + self_compiler))
        << c.what;
    EXPECT_THAT(r.error().message, HasSubstr(fmt::format("SDK version {}", lib.sdk_version)))
        << c.what;
  }
}

// SDKs 9 and 10 only add to SDK 8: a library of any of the three is accepted.
TEST(CheckBuildInfoTest, AcceptsSdk8To10Libraries) {
  static_assert(kSdkVersion == 10 && kOldestCompatibleSdkVersion == 8);
  for (uint32_t v : {8u, 9u, 10u}) {
    BerthPluginBuildInfo lib = BinaryBuildInfo();
    lib.sdk_version = v;
    VoidResult r = CheckBuildInfo(lib, BinaryBuildInfo());
    EXPECT_TRUE(r.ok()) << v << ": " << r.error().message;
  }
}

TEST(LoadPluginLibraryTest, LoadsLibraryBuiltForSdk8) {
  Registry registry;
  VoidResult r = LoadPluginLibrary(BERTH_SDK8_PLUGIN, &registry);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NE(registry.Find("Sdk8Plugin"), nullptr);
}

TEST(LoadPluginLibraryTest, RefusesLibraryOfUnknownSdkVersion) {
  Registry registry;
  VoidResult r = LoadPluginLibrary(BERTH_BAD_VERSION_PLUGIN, &registry);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("loads libraries of SDK versions 8 to 10"));
  EXPECT_TRUE(registry.Names().empty());
}

// A library whose registration records another toolchain (test/plugins/bad_plugin.cc, BAD_ABI)
// is refused before it registers anything, and the error names both toolchains.
TEST(LoadPluginLibraryTest, RefusesLibraryBuiltWithAnotherToolchain) {
  Registry registry;
  VoidResult r = LoadPluginLibrary(BERTH_BAD_ABI_PLUGIN, &registry);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("built with othercc 99.1, libstdc++ 99"));
  EXPECT_THAT(r.error().message, HasSubstr("this berth is built with"));
  EXPECT_TRUE(registry.Names().empty());
}

TEST(LoadPluginLibraryTest, LoadsLibraryBuiltWithThisToolchain) {
  Registry registry;
  VoidResult r = LoadPluginLibrary(BERTH_GOOD_PLUGIN, &registry);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(registry.Names().empty());
}

}  // namespace
}  // namespace berth::pluginlib
