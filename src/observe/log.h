// Logger: klog's text format on stderr, with verbosity levels, so log lines from Berth read
// (and grep) like kube-scheduler's:
//   I0622 14:15:38.638508      15 schedule_one.cc:302] "Successfully bound pod to node"
//   pod="default/x" node="n1"
//
// Threads: thread-safe; each line is written with one call. V(n) is a relaxed atomic load, so
// disabled levels cost nothing before formatting.
#pragma once

#include <atomic>
#include <cstdio>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::observe {

// Where a log call is (the file:line klog prints). Not std::source_location: Clang 14 with
// libstdc++ 12 lacks it, and the builtins below work with both compilers.
struct SourceLocation {
  static constexpr SourceLocation current(const char* file = __builtin_FILE(),
                                          unsigned line = __builtin_LINE()) {
    return SourceLocation{file, line};
  }
  constexpr const char* file_name() const { return file; }
  constexpr unsigned line() const { return line_number; }
  const char* file = "";
  unsigned line_number = 0;
};

// A key/value pair of a structured log line; the value is already rendered (numbers bare,
// strings quoted by KV::Str).
struct KV {
  std::string_view key;
  std::string value;
  static KV Str(std::string_view key, std::string_view value);
  static KV Int(std::string_view key, long long value);
};

class Logger {
 public:
  explicit Logger(int verbosity = 0, std::FILE* out = stderr) : verbosity_(verbosity), out_(out) {}
  virtual ~Logger() = default;

  bool V(int level) const { return level <= verbosity_.load(std::memory_order_relaxed); }
  void set_verbosity(int v) { verbosity_ = v; }

  void Info(std::string_view msg, std::initializer_list<KV> kvs = {},
            SourceLocation loc = SourceLocation::current()) {
    Write('I', msg, kvs, loc);
  }
  void Warning(std::string_view msg, std::initializer_list<KV> kvs = {},
               SourceLocation loc = SourceLocation::current()) {
    Write('W', msg, kvs, loc);
  }
  void Error(std::string_view msg, std::initializer_list<KV> kvs = {},
             SourceLocation loc = SourceLocation::current()) {
    Write('E', msg, kvs, loc);
  }
  // The formatted line (without the trailing newline), for tests.
  static std::string Format(char severity, std::string_view msg, std::initializer_list<KV> kvs,
                            const SourceLocation& loc);

 protected:
  virtual void Emit(const std::string& line);

 private:
  void Write(char severity, std::string_view msg, std::initializer_list<KV> kvs,
             const SourceLocation& loc) {
    Emit(Format(severity, msg, kvs, loc));
  }
  std::atomic<int> verbosity_;
  std::FILE* out_;
  std::mutex mu_;
};

// Keeps lines in memory (tests).
class CapturingLogger final : public Logger {
 public:
  explicit CapturingLogger(int verbosity = 10) : Logger(verbosity, nullptr) {}
  std::vector<std::string> lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }

 protected:
  void Emit(const std::string& line) override {
    std::lock_guard lock(mu_);
    lines_.push_back(line);
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;
};

}  // namespace berth::observe
