#include "daemon/config_watcher.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <fstream>
#include <iterator>
#include <utility>

namespace berth::daemon {

std::string ContentHash(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest, &size, EVP_sha256(), nullptr);
  std::string hex = "sha256:";
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

ConfigFileWatcher::ConfigFileWatcher(std::string path, std::string current_hash, OnChange on_change)
    : path_(std::move(path)),
      on_change_(std::move(on_change)),
      handed_on_(std::move(current_hash)) {}

ConfigFileWatcher::~ConfigFileWatcher() { Stop(); }

void ConfigFileWatcher::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ConfigFileWatcher::Start(std::chrono::milliseconds period) {
  thread_ = std::thread([this, period] {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait_for(lock, period, [this] { return stopping_ || check_requested_; });
      if (stopping_) return;
      const bool requested = std::exchange(check_requested_, false);
      lock.unlock();
      Poll(requested);
      lock.lock();
    }
  });
}

void ConfigFileWatcher::RequestCheck() {
  {
    std::lock_guard lock(mu_);
    check_requested_ = true;
  }
  cv_.notify_all();
}

bool ConfigFileWatcher::Poll(bool requested) {
  // By path every time: a rename over the file or a ConfigMap's symlink swap is a new file.
  std::ifstream in(path_, std::ios::binary);
  if (!in.is_open()) {
    // Polling, a file briefly missing is not worth a report; asked for, it is.
    if (!requested) return false;
    on_change_({{}, {}, Error{fmt::format("{}: cannot read the file", path_)}});
    return true;
  }
  Change change{std::string(std::istreambuf_iterator<char>(in), {}), {}, std::nullopt};
  change.hash = ContentHash(change.text);
  if (change.hash == handed_on_) {
    candidate_.clear();
    return false;
  }
  if (!requested && change.hash != candidate_) {
    candidate_ = change.hash;
    return false;
  }
  candidate_.clear();
  handed_on_ = change.hash;
  on_change_(change);
  return true;
}

}  // namespace berth::daemon
