#include "api/read_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace berth {

Result<std::string> ReadFileText(const std::string& path, size_t max_bytes) {
  const bool is_stdin = path == "-";
  int fd = is_stdin ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return Error{fmt::format("{}: cannot open file: {}", path, std::strerror(errno)),
                 errno == ENOENT ? ErrorCode::kNotFound : ErrorCode::kUnknown};
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (!is_stdin) ::close(fd);
    return Error{fmt::format("{}: is a directory", path), ErrorCode::kInvalid};
  }
  // Sizes come from reading, not from seeking: pipes and /dev/stdin have none.
  std::string text;
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    text.reserve(std::min<size_t>(static_cast<size_t>(st.st_size), max_bytes) + 1);
  }
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      std::string why = std::strerror(errno);
      if (!is_stdin) ::close(fd);
      return Error{fmt::format("{}: read error: {}", path, why)};
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > max_bytes) {
      if (!is_stdin) ::close(fd);
      return Error{fmt::format("{}: larger than {} MiB", path, max_bytes >> 20),
                   ErrorCode::kInvalid};
    }
    text.append(buf, static_cast<size_t>(n));
  }
  if (!is_stdin) ::close(fd);
  return text;
}

}  // namespace berth

namespace berth {

Result<std::vector<std::string>> ExpandManifestPaths(const std::string& path, bool recursive) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path == "-" || !fs::is_directory(path, ec)) return std::vector<std::string>{path};
  std::vector<std::string> out;
  auto consider = [&](const fs::directory_entry& e) {
    if (!e.is_regular_file(ec)) return;
    auto ext = e.path().extension().string();
    if (ext == ".yaml" || ext == ".yml" || ext == ".json") out.push_back(e.path().string());
  };
  if (recursive) {
    for (const auto& e : fs::recursive_directory_iterator(path, ec)) consider(e);
  } else {
    for (const auto& e : fs::directory_iterator(path, ec)) consider(e);
  }
  if (ec) return Error{fmt::format("{}: {}", path, ec.message())};
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    return Error{fmt::format("{}: no .yaml, .yml or .json files in the directory", path),
                 ErrorCode::kInvalid};
  }
  return out;
}

}  // namespace berth
