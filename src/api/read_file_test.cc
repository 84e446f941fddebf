#include "api/read_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

namespace berth {
namespace {

namespace fs = std::filesystem;

class ReadFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("berth-read-file-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
  fs::path dir_;
};

TEST_F(ReadFileTest, ReadsPipesWhichHaveNoSize) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::thread writer([&] {
    std::string chunk(100000, 'x');
    for (int i = 0; i < 3; ++i) ASSERT_EQ(write(fds[1], chunk.data(), chunk.size()), 100000);
    close(fds[1]);
  });
  auto text = ReadFileText("/dev/fd/" + std::to_string(fds[0]), 1 << 20);
  writer.join();
  close(fds[0]);
  ASSERT_TRUE(text.ok()) << text.error().message;
  EXPECT_EQ(text->size(), 300000u);
}

TEST_F(ReadFileTest, BoundsDirectoriesAndMissingFilesAreOneLineErrors) {
  auto zero = ReadFileText("/dev/zero", 1 << 20);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().message, "/dev/zero: larger than 1 MiB");
  auto dir = ReadFileText(dir_.string(), 1 << 20);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().message, dir_.string() + ": is a directory");
  auto missing = ReadFileText((dir_ / "none.yaml").string(), 1 << 20);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST_F(ReadFileTest, DirectoriesExpandToManifestsInNameOrder) {
  Write(dir_ / "b.yaml", "");
  Write(dir_ / "a.json", "");
  Write(dir_ / "c.yml", "");
  Write(dir_ / "notes.txt", "");
  Write(dir_ / "sub" / "d.yaml", "");
  auto flat = ExpandManifestPaths(dir_.string(), false);
  ASSERT_TRUE(flat.ok());
  EXPECT_EQ(*flat, (std::vector<std::string>{(dir_ / "a.json").string(), (dir_ / "b.yaml").string(),
                                             (dir_ / "c.yml").string()}));
  auto deep = ExpandManifestPaths(dir_.string(), true);
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(deep->size(), 4u);
  EXPECT_EQ(deep->back(), (dir_ / "sub" / "d.yaml").string());
  auto empty = ExpandManifestPaths((dir_ / "sub" / "..").string() + "/sub/../sub", false);
  ASSERT_TRUE(empty.ok());
  fs::remove(dir_ / "sub" / "d.yaml");
  auto none = ExpandManifestPaths((dir_ / "sub").string(), false);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message.find("no .yaml, .yml or .json files"), std::string::npos);
  EXPECT_EQ(*ExpandManifestPaths("-", false), std::vector<std::string>{"-"});
}

}  // namespace
}  // namespace berth
