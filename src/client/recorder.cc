#include "client/recorder.h"

#include <fmt/format.h>

#include <chrono>
#include <ctime>

namespace berth::client {
namespace {

using Json = nlohmann::json;

std::string StringAt(const Json& obj, std::string_view member) {
  if (!obj.is_object()) return "";
  auto it = obj.find(member);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

const Json& MetadataOf(const Json& obj) {
  static const Json kEmpty = Json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find("metadata");
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

std::string KeyOf(const Json& obj) {
  const Json& m = MetadataOf(obj);
  const std::string ns = StringAt(m, "namespace");
  return ns.empty() ? StringAt(m, "name") : ns + "/" + StringAt(m, "name");
}

// What a Delete line carries: enough to name the object, as kube-scheduler-simulator's
// recorder writes it.
Json DeletedStub(const Json& obj) {
  const Json& m = MetadataOf(obj);
  Json meta = {{"name", StringAt(m, "name")}};
  meta["namespace"] = StringAt(m, "namespace");
  return {{"apiVersion", StringAt(obj, "apiVersion")},
          {"kind", StringAt(obj, "kind")},
          {"metadata", std::move(meta)}};
}

std::string Describe(const Error& e) {
  switch (e.code) {
    case ErrorCode::kUnavailable:
    case ErrorCode::kTimeout:
      return "the API server is unreachable: " + e.message;
    case ErrorCode::kForbidden:
      return "forbidden (the credentials may not list it): " + e.message;
    case ErrorCode::kUnauthorized:
      return "unauthorized (the credentials were refused): " + e.message;
    default:
      return e.message;
  }
}

}  // namespace

std::vector<RecordedKind> DefaultRecordedKinds() {
  return {
      {"/api/v1/namespaces", "v1", "Namespace", false},
      {"/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass",
       false},
      {"/apis/storage.k8s.io/v1/storageclasses", "storage.k8s.io/v1", "StorageClass", false},
      {"/api/v1/persistentvolumeclaims", "v1", "PersistentVolumeClaim", false},
      {"/api/v1/persistentvolumes", "v1", "PersistentVolume", false},
      {"/apis/policy/v1/poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", false},
      {"/api/v1/nodes", "v1", "Node", false},
      {"/api/v1/pods", "v1", "Pod", false},
      {"/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1", "ResourceClaim", true},
      {"/apis/resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1", "ResourceSlice", true},
  };
}

std::string FormatRecordTime(TimePoint t) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(t);
  const int64_t nanos = (t - secs).count();
  const std::time_t tt = secs.time_since_epoch().count();
  std::tm tm{};
  gmtime_r(&tt, &tm);
  std::string out = fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}", tm.tm_year + 1900,
                                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  if (nanos > 0) {
    std::string frac = fmt::format("{:09}", nanos);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    out += "." + frac;
  }
  return out + "Z";
}

bool RecordWriter::Write(TimePoint t, std::string_view event, const Json& resource) {
  // Member order as the Go struct writes it: time, event, resource.
  std::string line = fmt::format("{{\"time\":\"{}\",\"event\":\"{}\",\"resource\":{}}}\n",
                                 FormatRecordTime(t), event, resource.dump());
  std::lock_guard lock(mu_);
  if (std::fwrite(line.data(), 1, line.size(), out_) != line.size()) return false;
  if (std::fflush(out_) != 0) return false;
  ++lines_;
  return true;
}

ClusterRecorder::ClusterRecorder(RestClient* rest, RecordWriter* writer, RecorderOptions options)
    : rest_(rest), writer_(writer), options_(std::move(options)) {}

ClusterRecorder::~ClusterRecorder() { Stop(); }

TimePoint ClusterRecorder::Now() const {
  if (options_.clock) return options_.clock->Now();
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

void ClusterRecorder::Emit(Watch& w, std::string_view event, Json& obj) {
  if (!obj.contains("kind")) obj["kind"] = w.kind.kind;
  if (!obj.contains("apiVersion")) obj["apiVersion"] = w.kind.api_version;
  // Field-manager bookkeeping is most of an object's bytes and no simulator reads it.
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object()) m->erase("managedFields");
  const std::string key = KeyOf(obj);
  if (event == "Delete") {
    w.live.erase(key);
  } else {
    w.live[key] = StringAt(MetadataOf(obj), "resourceVersion");
  }
  if (!writer_->Write(Now(), event, event == "Delete" ? DeletedStub(obj) : obj)) {
    failed_ = true;
    stop_ = true;
    wait_cv_.notify_all();
  }
}

VoidResult ClusterRecorder::List(Watch& w, bool relist) {
  std::unordered_map<std::string, std::string> before;
  if (relist) before.swap(w.live);
  std::string cont, rv;
  do {
    std::string path = fmt::format("{}?limit={}", w.kind.path, options_.page_size);
    if (!cont.empty()) path += "&continue=" + cont;
    auto page = rest_->Get(path);
    if (!page.ok()) return page.error();
    if (!page->is_object() || !(*page)["items"].is_array())
      return Error{fmt::format("listing {}: the answer is not a list", w.kind.path)};
    for (Json& item : (*page)["items"]) {
      if (!item.is_object()) continue;
      const std::string key = KeyOf(item);
      auto old = before.find(key);
      if (old == before.end()) {
        Emit(w, "Add", item);
      } else {
        const bool changed = old->second != StringAt(MetadataOf(item), "resourceVersion");
        before.erase(old);
        if (changed) {
          Emit(w, "Update", item);
        } else {
          w.live[key] = StringAt(MetadataOf(item), "resourceVersion");
        }
      }
    }
    cont = StringAt(MetadataOf(*page), "continue");
    if (rv.empty()) rv = StringAt(MetadataOf(*page), "resourceVersion");
  } while (!cont.empty() && !stop_);
  // What the relist no longer shows was deleted while the watch was away.
  for (const auto& [key, _] : before) {
    const size_t slash = key.find('/');
    Json gone = {{"apiVersion", w.kind.api_version}, {"kind", w.kind.kind}};
    gone["metadata"] = slash == std::string::npos ? Json{{"name", key}}
                                                  : Json{{"name", key.substr(slash + 1)},
                                                         {"namespace", key.substr(0, slash)}};
    Emit(w, "Delete", gone);
  }
  w.rv = rv;
  return {};
}

bool ClusterRecorder::WatchOnce(Watch& w) {
  const std::string path =
      fmt::format("{}?watch=true&allowWatchBookmarks=true&resourceVersion={}&timeoutSeconds={}",
                  w.kind.path, w.rv, options_.watch_timeout_seconds);
  bool gone = false;
  auto status = rest_->Watch(
      path,
      [&](std::string_view line) {
        if (line.empty()) return true;
        Json ev = Json::parse(line, nullptr, false);
        const std::string type = StringAt(ev, "type");
        auto object = ev.is_object() ? ev.find("object") : ev.end();
        if (object == ev.end() || !object->is_object()) return false;
        if (type == "ERROR") {
          auto code = object->find("code");
          gone = code != object->end() && code->is_number_integer() && *code == 410;
          return false;
        }
        const std::string rv = StringAt(MetadataOf(*object), "resourceVersion");
        if (type == "ADDED") {
          Emit(w, "Add", *object);
        } else if (type == "MODIFIED") {
          Emit(w, "Update", *object);
        } else if (type == "DELETED") {
          Emit(w, "Delete", *object);
        } else if (type != "BOOKMARK") {
          return false;
        }
        if (!rv.empty()) w.rv = rv;
        return !stop_.load();
      },
      &w.stream, std::chrono::seconds(options_.watch_timeout_seconds + 30));
  if (status.ok() && *status == 410) gone = true;
  if (!status.ok() && !stop_ && options_.log)
    options_.log(
        fmt::format("watch of {} ended: {}; resuming", w.kind.path, status.error().message));
  return !gone;
}

void ClusterRecorder::Run(Watch& w) {
  auto backoff = std::chrono::milliseconds(100);
  bool relist = false;
  while (!stop_) {
    if (relist) {
      if (auto r = List(w, true); !r.ok()) {
        if (options_.log)
          options_.log(fmt::format("relisting {}: {}", w.kind.path, r.error().message));
        std::unique_lock lock(wait_mu_);
        wait_cv_.wait_for(lock, backoff, [&] { return stop_.load(); });
        backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
        continue;
      }
      relist = false;
    }
    const auto started = std::chrono::steady_clock::now();
    if (!WatchOnce(w)) {
      relist = true;
      continue;
    }
    // A stream that ends at once (a server refusing watches) is not hammered.
    if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1)) {
      std::unique_lock lock(wait_mu_);
      wait_cv_.wait_for(lock, backoff, [&] { return stop_.load(); });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    } else {
      backoff = std::chrono::milliseconds(100);
    }
  }
}

VoidResult ClusterRecorder::Start() {
  for (const RecordedKind& kind : options_.kinds) {
    auto w = std::make_unique<Watch>();
    w->kind = kind;
    if (auto r = List(*w, false); !r.ok()) {
      if (r.error().code == ErrorCode::kNotFound) {
        if (options_.log)
          options_.log(
              fmt::format("{} ({}) is not served here; not recorded", kind.kind, kind.path));
        continue;
      }
      Stop();
      return Error{fmt::format("listing {} ({}): {}", kind.kind, kind.path, Describe(r.error())),
                   r.error().code};
    }
    if (failed_) return Error{"writing the recording failed"};
    watches_.push_back(std::move(w));
  }
  for (auto& w : watches_) {
    Watch* raw = w.get();
    raw->thread = std::thread([this, raw] { Run(*raw); });
  }
  return {};
}

void ClusterRecorder::Stop() {
  stop_ = true;
  wait_cv_.notify_all();
  for (auto& w : watches_) w->stream.Cancel();
  for (auto& w : watches_)
    if (w->thread.joinable()) w->thread.join();
}

std::vector<std::string> ClusterRecorder::kinds() const {
  std::vector<std::string> out;
  for (const auto& w : watches_) out.push_back(w->kind.kind);
  return out;
}

}  // namespace berth::client
