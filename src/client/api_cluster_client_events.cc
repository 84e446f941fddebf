// ApiClusterClient's events: the bodies of events.k8s.io/v1 and core/v1 Events, and the loop
// that writes the queued ones in batches.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "api/json_text.h"
#include "client/api_cluster_client.h"
#include "client/api_cluster_client_internal.h"
#include "client/micro_time.h"

namespace berth::client {

using Json = nlohmann::json;
using internal::BackOff;
using internal::kEventBatch;
using internal::kEventLinger;
using internal::kStopDrainBudget;
using internal::kUnknownOutcomeBudget;
using internal::OutcomeUnknown;

namespace {

// "regarding" / "involvedObject": the pod the event is about.
void AppendPodReference(const std::string& ns, const std::string& name, const std::string& uid,
                        const std::string& resource_version, std::string* out) {
  out->append(R"({"apiVersion":"v1","kind":"Pod","name":)");
  AppendJsonString(name, out);
  out->append(R"(,"namespace":)");
  AppendJsonString(ns, out);
  out->append(R"(,"resourceVersion":)");
  AppendJsonString(resource_version, out);
  out->append(R"(,"uid":)");
  AppendJsonString(uid, out);
  out->push_back('}');
}

// `{"apiVersion":...,"kind":"Event","metadata":{...}`: the start of either form of an event.
void AppendEventHead(std::string_view api_version, const std::string& name, const std::string& ns,
                     std::string* out) {
  out->append(R"({"apiVersion":)");
  AppendJsonString(api_version, out);
  out->append(R"(,"kind":"Event","metadata":{"name":)");
  AppendJsonString(name, out);
  out->append(R"(,"namespace":)");
  AppendJsonString(ns, out);
  out->push_back('}');
}

void AppendMember(std::string_view key, std::string_view value, std::string* out) {
  out->push_back(',');
  AppendJsonString(key, out);
  out->push_back(':');
  AppendJsonString(value, out);
}

}  // namespace

std::string ApiClusterClient::EventsV1Body(const PendingEvent& ev) {
  std::string out;
  out.reserve(512 + ev.note.size());
  AppendEventHead("events.k8s.io/v1", ev.name, ev.namespace_, &out);
  AppendMember("action", ev.action, &out);
  AppendMember("eventTime", ev.event_time, &out);
  AppendMember("note", ev.note, &out);
  AppendMember("reason", ev.reason, &out);
  out.append(R"(,"regarding":)");
  AppendPodReference(ev.namespace_, ev.pod_name, ev.pod_uid, ev.pod_resource_version, &out);
  AppendMember("reportingController", ev.controller, &out);
  AppendMember("reportingInstance", ev.controller + "-berth", &out);
  AppendMember("type", ev.type, &out);
  out.push_back('}');
  return out;
}

std::string ApiClusterClient::CoreV1EventBody(const PendingEvent& ev) {
  // core/v1 timestamps have whole seconds only.
  const std::string seconds = ev.event_time.substr(0, 19) + "Z";
  std::string out;
  out.reserve(640 + ev.note.size());
  AppendEventHead("v1", ev.name, ev.namespace_, &out);
  AppendMember("action", ev.action, &out);
  out.append(R"(,"count":1)");
  AppendMember("eventTime", ev.event_time, &out);
  AppendMember("firstTimestamp", seconds, &out);
  out.append(R"(,"involvedObject":)");
  AppendPodReference(ev.namespace_, ev.pod_name, ev.pod_uid, ev.pod_resource_version, &out);
  AppendMember("lastTimestamp", seconds, &out);
  AppendMember("message", ev.note, &out);
  AppendMember("reason", ev.reason, &out);
  AppendMember("reportingComponent", ev.controller, &out);
  AppendMember("reportingInstance", ev.controller + "-berth", &out);
  out.append(R"(,"source":{"component":)");
  AppendJsonString(ev.controller, &out);
  out.push_back('}');
  AppendMember("type", ev.type, &out);
  out.push_back('}');
  return out;
}

void ApiClusterClient::EventLoop() {
  std::vector<PendingEvent> batch;
  std::vector<RestClient::EncodedWrite> writes;
  for (;;) {
    batch.clear();
    {
      std::unique_lock lock(events_mu_);
      events_cv_.wait(lock, [&] { return stopping_ || !events_.empty(); });
      if (stopping_ && !events_.empty() && std::chrono::steady_clock::now() >= drain_until_) {
        const size_t left = events_.size();
        events_.clear();
        lock.unlock();
        if (log_)
          log_(fmt::format(
              "stopping: {} events not written within {} s are dropped", left,
              std::chrono::duration_cast<std::chrono::seconds>(kStopDrainBudget).count()));
        return;
      }
      if (events_.empty()) return;
      if (events_.size() < kEventBatch && !stopping_) {
        events_cv_.wait_for(lock, kEventLinger,
                            [&] { return stopping_ || events_.size() >= kEventBatch; });
      }
      // What waits, up to a batch, goes out together (pipelined on one connection): one round
      // trip for the lot.
      while (!events_.empty() && batch.size() < kEventBatch) {
        batch.push_back(std::move(events_.front()));
        events_.pop_front();
      }
    }
    // An event's name is chosen here, so a resend after a lost answer cannot duplicate it (the
    // server answers AlreadyExists): one that may not have arrived is sent again.
    auto post = [&](const std::string& path, const std::string& body) -> VoidRequestResult {
      auto wait = std::chrono::milliseconds(100);
      const auto give_up = std::chrono::steady_clock::now() + kUnknownOutcomeBudget;
      for (;;) {
        auto r = rest_->SendEncoded("POST", path, body);
        if (r.ok() || r.error().code == ErrorCode::kAlreadyExists) return {};
        if (!OutcomeUnknown(r.error()) || std::chrono::steady_clock::now() > give_up ||
            stop_retrying_)
          return r.error();
        BackOff(&wait);
      }
    };
    std::vector<const PendingEvent*> core_v1;
    if (events_api_ != 2) {
      writes.clear();
      for (const PendingEvent& ev : batch) {
        writes.push_back({fmt::format("/apis/events.k8s.io/v1/namespaces/{}/events", ev.namespace_),
                          EventsV1Body(ev)});
      }
      auto results = rest_->SendEncodedPipelined("POST", writes);
      for (size_t i = 0; i < batch.size(); ++i) {
        VoidRequestResult r = std::move(results[i]);
        // Lost or turned away for now (429): sent again alone, with backoff.
        if (!r.ok() && (OutcomeUnknown(r.error()) || r.error().code == ErrorCode::kTooManyRequests))
          r = post(writes[i].path, writes[i].body);
        if (r.ok() || r.error().code == ErrorCode::kAlreadyExists) {
          events_api_ = 1;
        } else if (r.error().code == ErrorCode::kNotFound) {
          events_api_ = 2;
          core_v1.push_back(&batch[i]);
        } else if (log_) {
          log_("writing event: " + r.error().message);
        }
      }
    } else {
      for (const PendingEvent& ev : batch) core_v1.push_back(&ev);
    }
    // core/v1 Events, for API servers without events.k8s.io.
    for (const PendingEvent* ev : core_v1) {
      auto r =
          post(fmt::format("/api/v1/namespaces/{}/events", ev->namespace_), CoreV1EventBody(*ev));
      if (!r.ok() && log_) log_("writing event: " + r.error().message);
    }
  }
}

}  // namespace berth::client
