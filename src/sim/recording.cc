#include "sim/recording.h"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <ctime>

namespace berth::sim {
namespace {

bool Digits(std::string_view s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string StringAt(const nlohmann::json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

Result<TimePoint> ParseRecordTime(std::string_view s) {
  std::tm tm{};
  int y, mo, d, h, mi, se;
  if (!Digits(s, 0, 4, &y) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
      !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &se))
    return Error{fmt::format("\"{}\" is not an RFC 3339 time", s)};
  size_t i = 19;
  int64_t nanos = 0;
  if (i < s.size() && s[i] == '.') {
    int digits = 0;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++digits)
      if (digits < 9) nanos = nanos * 10 + (s[i] - '0');
    for (int k = digits; k < 9; ++k) nanos *= 10;
  }
  int offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (!Digits(s, i + 1, 2, &oh) || i + 3 >= s.size() || s[i + 3] != ':' ||
        !Digits(s, i + 4, 2, &om))
      return Error{fmt::format("\"{}\": bad UTC offset", s)};
    offset = (s[i] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    i += 6;
  }
  if (i != s.size()) return Error{fmt::format("\"{}\" is not an RFC 3339 time", s)};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  const int64_t secs = static_cast<int64_t>(timegm(&tm)) - offset;
  return TimePoint{std::chrono::seconds(secs) + std::chrono::nanoseconds(nanos)};
}

Result<std::unique_ptr<RecordingReader>> RecordingReader::Open(const std::string& path) {
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "r");
  if (!f) return Error{fmt::format("{}: {}", path, std::strerror(errno)), ErrorCode::kNotFound};
  return std::unique_ptr<RecordingReader>(new RecordingReader(path, f));
}

RecordingReader::~RecordingReader() {
  free(buf_);
  if (f_ && f_ != stdin) std::fclose(f_);
}

Result<std::optional<RecordedEvent>> RecordingReader::Next() {
  for (;;) {
    const ssize_t n = getline(&buf_, &cap_, f_);
    if (n < 0) return std::optional<RecordedEvent>();
    ++line_;
    std::string_view text(buf_, static_cast<size_t>(n));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    if (text.find_first_not_of(" \t") == std::string_view::npos) continue;
    auto where = [&](std::string_view what) {
      return Error{fmt::format("{}:{}: {}", path_, line_, what), ErrorCode::kInvalid};
    };
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (!doc.is_object()) return where("not a JSON object");
    RecordedEvent ev;
    ev.line = line_;
    auto t = ParseRecordTime(StringAt(doc, "time"));
    if (!t.ok()) return where("time: " + t.error().message);
    ev.time = *t;
    const std::string event = StringAt(doc, "event");
    if (event == "Add") {
      ev.type = RecordedEvent::Type::kAdd;
    } else if (event == "Update") {
      ev.type = RecordedEvent::Type::kUpdate;
    } else if (event == "Delete") {
      ev.type = RecordedEvent::Type::kDelete;
    } else {
      return where(fmt::format("event: \"{}\" is not Add, Update or Delete", event));
    }
    auto res = doc.find("resource");
    if (res == doc.end() || !res->is_object()) return where("resource: missing");
    ev.resource = std::move(*res);
    ev.kind = StringAt(ev.resource, "kind");
    auto meta = ev.resource.find("metadata");
    if (meta == ev.resource.end()) return where("resource.metadata: missing");
    ev.name = StringAt(*meta, "name");
    ev.namespace_ = StringAt(*meta, "namespace");
    if (ev.kind.empty() || ev.name.empty())
      return where("resource: kind and metadata.name are required");
    return std::optional<RecordedEvent>(std::move(ev));
  }
}

}  // namespace berth::sim
