// ClusterRecorder: `berth record`. Lists and then watches the kinds the scheduler reads and
// writes every change as one line of kube-scheduler-simulator's recorder format:
//
//   {"time":"2026-11-28T22:40:01.5Z","event":"Add","resource":{...the object...}}
//
// `event` is Add, Update or Delete; a Delete's resource holds only apiVersion, kind and
// metadata.name/namespace (as that recorder writes it); `time` is when the change was seen
// (RFC 3339, UTC, nanoseconds without trailing zeros). The objects present when recording
// starts are written as Add lines first.
//
// Memory is bounded by the cluster, not by the recording: each line is written (and flushed)
// as its event arrives, and per kind only the keys and resourceVersions of live objects are
// kept, to tell a relist's (after 410 Gone) additions, updates and deletions apart.
//
// Threads: Start lists every kind on the caller's thread (so that an unreachable server or a
// forbidden list is an error there), then watches each kind on a thread of its own.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/clock.h"
#include "client/rest_client.h"
#include "net/http_client.h"

namespace berth::client {

struct RecordedKind {
  std::string path;         // collection path, e.g. /api/v1/pods
  std::string api_version;  // v1, storage.k8s.io/v1, ...
  std::string kind;         // Pod, ...
  // Not served by every cluster (a 404 for it is noted and the kind skipped).
  bool optional = false;
};

// Namespaces, Nodes, Pods, PersistentVolumes, PersistentVolumeClaims, StorageClasses,
// PodDisruptionBudgets, PriorityClasses, and — optional — ResourceClaims and ResourceSlices.
std::vector<RecordedKind> DefaultRecordedKinds();

// Formats `t` as Go's time.Time marshals in UTC (RFC 3339 with up to nine fraction digits,
// trailing zeros dropped).
std::string FormatRecordTime(TimePoint t);

// Serialises the lines of every watch into one file.
class RecordWriter {
 public:
  explicit RecordWriter(std::FILE* out) : out_(out) {}
  // One line; false when the write failed (disk full, closed pipe).
  bool Write(TimePoint t, std::string_view event, const nlohmann::json& resource);
  int64_t lines() const { return lines_; }

 private:
  std::mutex mu_;
  std::FILE* out_;
  std::atomic<int64_t> lines_{0};
};

struct RecorderOptions {
  std::vector<RecordedKind> kinds = DefaultRecordedKinds();
  const Clock* clock = nullptr;                 // the lines' time; null: the real clock
  std::function<void(const std::string&)> log;  // notes (kinds skipped, reconnects)
  int page_size = 500;
  int watch_timeout_seconds = 300;
};

class ClusterRecorder {
 public:
  ClusterRecorder(RestClient* rest, RecordWriter* writer, RecorderOptions options);
  ~ClusterRecorder();
  // Lists every kind and writes its objects; then starts the watches. Errors name the kind
  // and say whether the server is unreachable or the list forbidden.
  VoidResult Start();
  // Ends the watches and waits for their threads. Idempotent.
  void Stop();
  // A write failed (the recording is incomplete); the watches stop.
  bool failed() const { return failed_; }
  // Kinds being recorded (those served).
  std::vector<std::string> kinds() const;

 private:
  struct Watch {
    RecordedKind kind;
    std::string rv;  // resume from here
    // key -> resourceVersion of each live object (what a relist is compared with).
    std::unordered_map<std::string, std::string> live;
    net::StreamHandle stream;
    std::thread thread;
  };
  // Lists `w`'s kind, writing Add (and, on a relist, Update and Delete) lines.
  VoidResult List(Watch& w, bool relist);
  // One watch request; false when it must relist (410 Gone).
  bool WatchOnce(Watch& w);
  void Run(Watch& w);
  void Emit(Watch& w, std::string_view event, nlohmann::json& obj);
  TimePoint Now() const;

  RestClient* rest_;
  RecordWriter* writer_;
  RecorderOptions options_;
  std::vector<std::unique_ptr<Watch>> watches_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
};

}  // namespace berth::client
