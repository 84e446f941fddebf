// ConfigFileWatcher: notices that the scheduler's configuration file has new content, for a live
// reload. It reads the file by its path every period (a second), following symlinks, so every
// way a file is replaced is seen: written in place, renamed over by an editor, or swapped with
// the `..data` symlink of a Kubernetes ConfigMap volume. The content's SHA-256 decides: the same
// content again is nothing. A change is handed on once two reads a period apart agree (a file
// caught half-written is not reloaded); RequestCheck (SIGHUP) reads at once and hands on what it
// reads without waiting.
//
// Threads: Start runs the polls on a thread of the watcher's; `on_change` is called there, one
// change at a time. RequestCheck may be called from any thread; Poll is for tests.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "berth/api/result.h"

namespace berth::daemon {

// "sha256:<hex>" of `text`.
std::string ContentHash(std::string_view text);

class ConfigFileWatcher {
 public:
  struct Change {
    std::string text;
    std::string hash;            // ContentHash(text)
    std::optional<Error> error;  // the file could not be read (a requested check only)
  };
  using OnChange = std::function<void(const Change&)>;

  // `current_hash`: the content the process runs with (no change until it differs).
  ConfigFileWatcher(std::string path, std::string current_hash, OnChange on_change);
  ~ConfigFileWatcher();
  ConfigFileWatcher(const ConfigFileWatcher&) = delete;
  ConfigFileWatcher& operator=(const ConfigFileWatcher&) = delete;

  void Start(std::chrono::milliseconds period = std::chrono::seconds(1));
  // Ends the polls (joins the thread); idempotent, also done by the destructor.
  void Stop();
  // The next poll happens now and hands on any content that differs from the last handed on.
  void RequestCheck();
  // One poll; `requested`: hand a change on without waiting for a second read, and report an
  // unreadable file. True if `on_change` was called.
  bool Poll(bool requested);
  const std::string& path() const { return path_; }

 private:
  const std::string path_;
  const OnChange on_change_;
  std::string handed_on_;  // the hash of the content last handed on (or started with)
  std::string candidate_;  // a new hash seen once, handed on if the next poll sees it again
  std::mutex mu_;
  std::condition_variable cv_;
  bool check_requested_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace berth::daemon
