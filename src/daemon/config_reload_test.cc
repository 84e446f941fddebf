// The daemon's side of a live reload: the watcher notices new content however the file is
// replaced (in place, renamed over, a ConfigMap's ..data symlink swap), and the reloader refuses
// what does not load (log line, metric) and hands the rest to the scheduling loop.
#include "daemon/config_reload.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "daemon/config_watcher.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler_test_util.h"
#include "testing/builders.h"

namespace berth::daemon {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("berth-reload-test-" + std::to_string(::getpid()) + "-" + std::to_string(next_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  static inline int next_ = 0;
  fs::path path_;
};

void Write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

struct Seen {
  std::vector<ConfigFileWatcher::Change> changes;
  ConfigFileWatcher::OnChange Callback() {
    return [this](const ConfigFileWatcher::Change& c) { changes.push_back(c); };
  }
};

TEST(ConfigFileWatcherTest, HandsOnNewContentOnceTwoPollsAgree) {
  TempDir dir;
  const fs::path file = dir / "config.yaml";
  Write(file, "a: 1\n");
  Seen seen;
  ConfigFileWatcher w(file.string(), ContentHash("a: 1\n"), seen.Callback());
  EXPECT_FALSE(w.Poll(false));  // the content in use
  Write(file, "a: 2\n");
  EXPECT_FALSE(w.Poll(false));  // seen once: maybe half written
  EXPECT_TRUE(w.Poll(false));   // the same again: handed on
  ASSERT_EQ(seen.changes.size(), 1u);
  EXPECT_EQ(seen.changes[0].text, "a: 2\n");
  EXPECT_EQ(seen.changes[0].hash, ContentHash("a: 2\n"));
  EXPECT_FALSE(w.Poll(false));  // identical content: nothing more
  // Rewritten with the same bytes (a new mtime): still nothing.
  Write(file, "a: 2\n");
  EXPECT_FALSE(w.Poll(true));
  EXPECT_EQ(seen.changes.size(), 1u);
}

TEST(ConfigFileWatcherTest, SeesAFileRenamedOverIt) {
  TempDir dir;
  const fs::path file = dir / "config.yaml";
  Write(file, "a: 1\n");
  Seen seen;
  ConfigFileWatcher w(file.string(), ContentHash("a: 1\n"), seen.Callback());
  // An editor's save: a new file renamed over the old one.
  Write(dir / ".config.yaml.swp", "a: 3\n");
  fs::rename(dir / ".config.yaml.swp", file);
  EXPECT_TRUE(w.Poll(true));  // asked for (SIGHUP): no second read needed
  ASSERT_EQ(seen.changes.size(), 1u);
  EXPECT_EQ(seen.changes[0].text, "a: 3\n");
}

TEST(ConfigFileWatcherTest, SeesAConfigMapVolumeSwapItsDataSymlink) {
  // The kubelet's layout: config.yaml -> ..data/config.yaml, ..data -> ..<timestamp>; an update
  // writes a new timestamped directory and renames a new ..data link over the old one.
  TempDir dir;
  fs::create_directories(dir / "..2026_11_29_01_00_00.1");
  Write(dir / "..2026_11_29_01_00_00.1" / "config.yaml", "a: 1\n");
  fs::create_directory_symlink("..2026_11_29_01_00_00.1", dir / "..data");
  fs::create_symlink("..data/config.yaml", dir / "config.yaml");
  Seen seen;
  ConfigFileWatcher w((dir / "config.yaml").string(), ContentHash("a: 1\n"), seen.Callback());
  EXPECT_FALSE(w.Poll(false));
  fs::create_directories(dir / "..2026_11_29_01_05_00.2");
  Write(dir / "..2026_11_29_01_05_00.2" / "config.yaml", "a: 2\n");
  fs::create_directory_symlink("..2026_11_29_01_05_00.2", dir / "..data_tmp");
  fs::rename(dir / "..data_tmp", dir / "..data");
  fs::remove_all(dir / "..2026_11_29_01_00_00.1");
  EXPECT_FALSE(w.Poll(false));
  EXPECT_TRUE(w.Poll(false));
  ASSERT_EQ(seen.changes.size(), 1u);
  EXPECT_EQ(seen.changes[0].text, "a: 2\n");
}

TEST(ConfigFileWatcherTest, AMissingFileIsReportedOnlyWhenACheckIsAskedFor) {
  TempDir dir;
  Seen seen;
  ConfigFileWatcher w((dir / "gone.yaml").string(), "", seen.Callback());
  EXPECT_FALSE(w.Poll(false));
  EXPECT_TRUE(w.Poll(true));
  ASSERT_EQ(seen.changes.size(), 1u);
  ASSERT_TRUE(seen.changes[0].error.has_value());
  EXPECT_NE(seen.changes[0].error->message.find("gone.yaml"), std::string::npos);
}

const char* kHeader =
    "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

std::string BinPack() {
  return std::string(kHeader) +
         "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
         "  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n"
         "        type: MostAllocated\n";
}

struct ReloaderHarness {
  TempDir dir;
  std::string path = (dir / "config.yaml").string();
  Registry registry = InTreeRegistry();
  FakeClock clock{TimePoint{} + std::chrono::seconds(1'800'000'000)};
  InMemoryCluster cluster;
  config::SchedulerConfiguration initial;
  std::unique_ptr<Scheduler> sched;
  observe::CapturingLogger log{0};
  observe::MetricsRegistry metrics;
  std::unique_ptr<ConfigReloader> reloader;

  ReloaderHarness() {
    Write(path, kHeader);
    auto c = config::LoadConfigFile(path, registry);
    EXPECT_TRUE(c.ok());
    initial = *c;
    sched = testing::SchedulerOver(initial, registry, cluster, clock, true);
    ConfigReloaderOptions o;
    o.path = path;
    o.registry = &registry;
    o.scheduler = sched.get();
    o.log = &log;
    o.metrics = &metrics;
    o.clock = &clock;
    reloader = std::make_unique<ConfigReloader>(o, initial, ContentHash(kHeader));
  }
  void Change(const std::string& text) { reloader->OnChange({text, ContentHash(text), {}}); }
  bool Logged(const std::string& part) const {
    for (const auto& line : log.lines())
      if (line.find(part) != std::string::npos) return true;
    return false;
  }
  bool Exposes(const std::string& line) const {
    return metrics.Expose().find(line) != std::string::npos;
  }
};

TEST(ConfigReloaderTest, AnInvalidFileIsRefusedThenAValidOneIsApplied) {
  ReloaderHarness h;
  ASSERT_NE(h.sched, nullptr);
  EXPECT_TRUE(h.Exposes("berth_config_info{hash=\"" + ContentHash(kHeader) + "\"} 1"));

  // Bad args: refused at once, naming the field; the running configuration stays.
  const std::string bad = std::string(kHeader) +
                          "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                          "      scoringStrategy:\n        type: Foo\n";
  h.Change(bad);
  EXPECT_TRUE(h.Logged("ConfigReloadFailed")) << h.log.lines().size();
  EXPECT_TRUE(h.Logged("scoringStrategy.type"));
  EXPECT_TRUE(h.Logged(h.path));
  EXPECT_TRUE(h.Exposes("berth_config_reloads_total{result=\"failure\"} 1"));
  EXPECT_TRUE(
      h.Exposes("berth_config_last_reload_timestamp_seconds{result=\"failure\"} 1800000000"))
      << h.metrics.Expose();
  EXPECT_TRUE(h.Exposes("berth_config_info{hash=\"" + ContentHash(kHeader) + "\"} 1"));

  // A YAML error likewise.
  h.Change(std::string(kHeader) + "profiles: [\n");
  EXPECT_TRUE(h.Exposes("berth_config_reloads_total{result=\"failure\"} 2"));

  // A valid file: handed to the loop, applied at its next turn.
  h.Change(BinPack());
  EXPECT_FALSE(h.Logged("ConfigReloaded"));
  EXPECT_FALSE(h.sched->ScheduleOne(false));
  EXPECT_TRUE(h.Logged("ConfigReloaded"));
  EXPECT_TRUE(h.Exposes("berth_config_reloads_total{result=\"success\"} 1"));
  EXPECT_TRUE(h.Exposes("berth_config_info{hash=\"" + ContentHash(BinPack()) + "\"} 1"));
  EXPECT_FALSE(h.Exposes("berth_config_info{hash=\"" + ContentHash(kHeader) + "\"}"));
  const auto running = h.reloader->running();
  ASSERT_NE(running, nullptr);
  EXPECT_EQ(nlohmann::json(config::EncodeConfiguration(*running))["profiles"][0]["pluginConfig"]
                    .dump()
                    .find("MostAllocated") != std::string::npos,
            true);

  // The same content again: nothing.
  h.Change(BinPack());
  EXPECT_FALSE(h.sched->ScheduleOne(false));
  EXPECT_TRUE(h.Exposes("berth_config_reloads_total{result=\"success\"} 1"));
}

TEST(ConfigReloaderTest, FieldsReadOnlyAtStartAreNamed) {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration a = config::DefaultConfiguration(registry);
  config::SchedulerConfiguration b = a;
  b.parallelism = 4;
  b.percentage_of_nodes_to_score = 30;  // reloaded
  b.leader_election.resource_name = "other";
  EXPECT_EQ(FieldsNeedingRestart(a, b),
            (std::vector<std::string>{"leaderElection", "parallelism"}));
  EXPECT_TRUE(FieldsNeedingRestart(a, a).empty());
}

}  // namespace
}  // namespace berth::daemon
