// Reading a recording: the JSON lines `berth record` and kube-scheduler-simulator's recorder
// write ({"time", "event": Add|Update|Delete, "resource"}; docs/compare.md), one at a time, so
// that a replay holds one line in memory rather than the whole history.
#pragma once

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "berth/api/result.h"
#include "berth/framework/clock.h"

namespace berth::sim {

struct RecordedEvent {
  enum class Type { kAdd, kUpdate, kDelete };
  TimePoint time{};
  Type type = Type::kAdd;
  std::string kind;  // resource.kind
  std::string namespace_, name;
  nlohmann::json resource;  // the whole object (a Delete: what the line holds)
  int64_t line = 0;         // 1-based, for messages
};

// RFC 3339 with optional fraction (up to nanoseconds) and a Z or ±hh:mm offset, as Go's
// time.Time marshals.
Result<TimePoint> ParseRecordTime(std::string_view text);

class RecordingReader {
 public:
  static Result<std::unique_ptr<RecordingReader>> Open(const std::string& path);
  ~RecordingReader();
  // The next event; nullopt at the end. Errors name the file and line.
  Result<std::optional<RecordedEvent>> Next();

 private:
  RecordingReader(std::string path, std::FILE* f) : path_(std::move(path)), f_(f) {}
  std::string path_;
  std::FILE* f_;
  char* buf_ = nullptr;
  size_t cap_ = 0;
  int64_t line_ = 0;
};

}  // namespace berth::sim
