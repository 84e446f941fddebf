#include "observe/log.h"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

namespace berth::observe {
namespace {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out.push_back(c);
    }
  }
  out += '"';
  return out;
}

}  // namespace

KV KV::Str(std::string_view key, std::string_view value) { return KV{key, Quote(value)}; }
KV KV::Int(std::string_view key, long long value) { return KV{key, std::to_string(value)}; }

std::string Logger::Format(char severity, std::string_view msg, std::initializer_list<KV> kvs,
                           const SourceLocation& loc) {
  auto now = std::chrono::system_clock::now();
  auto secs = std::chrono::time_point_cast<std::chrono::seconds>(now);
  auto micros = std::chrono::duration_cast<std::chrono::microseconds>(now - secs).count();
  std::time_t t = std::chrono::system_clock::to_time_t(secs);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::string_view file = loc.file_name();
  if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  static thread_local long tid = syscall(SYS_gettid);
  std::string line = fmt::format("{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {}:{}] {}", severity,
                                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                                 micros, tid, file, loc.line(), Quote(msg));
  for (const auto& kv : kvs) {
    line += ' ';
    line += kv.key;
    line += '=';
    line += kv.value;
  }
  return line;
}

void Logger::Emit(const std::string& line) {
  if (!out_) return;
  std::lock_guard lock(mu_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fputc('\n', out_);
  std::fflush(out_);
}

}  // namespace berth::observe
