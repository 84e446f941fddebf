// PodCensus against a recount of the same pods: random add/update/delete sequences and
// relists delivered as the informer delivers them, then a relist through a real informer.
#include "controllers/pod_census.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "client/client_test_util.h"
#include "controllers/pod_util.h"
#include "net/http_server.h"

namespace berth::controllers {
namespace {

const std::vector<std::string> kUids = {"", "uid-a", "uid-b"};
const std::vector<std::string> kNamespaces = {"one", "two"};

Json PodDoc(const std::string& ns, const std::string& name, std::mt19937& rng) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"uid", ns + "-" + name}}},
              {"spec", {{"containers", {{{"name", "c"}, {"image", "pause"}}}}}}};
  const std::vector<Json> label_sets = {
      {{"app", "web"}}, {{"app", "web"}, {"hash", "1"}}, {{"app", "db"}}, Json()};
  if (Json labels = label_sets[pick(4)]; !labels.is_null()) pod["metadata"]["labels"] = labels;
  Json refs = Json::array();
  switch (pick(5)) {
    case 0:
      break;  // an orphan
    case 1:   // owned by uid-a, but not as its controller: still an orphan
      refs.push_back({{"kind", "ReplicaSet"}, {"name", "a"}, {"uid", "uid-a"}});
      break;
    default:
      refs.push_back({{"kind", "ReplicaSet"},
                      {"name", "x"},
                      {"uid", kUids[1 + pick(2)]},
                      {"controller", true}});
  }
  if (!refs.empty()) pod["metadata"]["ownerReferences"] = refs;
  if (pick(6) == 0) pod["metadata"]["deletionTimestamp"] = "2027-01-01T00:00:00Z";
  const std::vector<std::string> phases = {"Pending", "Running", "Running", "Succeeded", "Failed"};
  pod["status"]["phase"] = phases[pick(5)];
  Json ready = {{"type", "Ready"}, {"status", pick(3) == 0 ? "False" : "True"}};
  const std::vector<std::string> times = {"2027-01-01T00:00:00Z", "2027-01-01T00:00:40Z", "",
                                          "not a time"};
  if (const std::string& t = times[pick(4)]; !t.empty()) ready["lastTransitionTime"] = t;
  if (pick(4) != 0) pod["status"]["conditions"] = Json::array({ready});
  return pod;
}

Object Decode(Json doc) {
  auto o = DecodeObject(std::move(doc), "test");
  EXPECT_TRUE(o.ok()) << o.error().message;
  return *o;
}

std::vector<Object> Values(const std::map<std::string, Object>& store) {
  std::vector<Object> out;
  for (const auto& [k, o] : store) out.push_back(o);
  return out;
}

// Every owner's groups equal a recount; their availability equals IsPodAvailable's count.
void ExpectMatchesRecount(const PodCensus& census, const std::vector<Object>& pods) {
  const UnixTime now = *ParseTimestamp("2027-01-01T00:01:00Z");
  for (const std::string& uid : kUids) {
    for (const std::string& ns : kNamespaces) {
      const auto groups = census.Groups(uid, ns);
      ASSERT_EQ(groups, PodCensus::Recount(pods, uid, ns)) << uid << " " << ns;
      for (int64_t min_ready : {0, 30, 90}) {
        int64_t available = 0, counted = 0;
        for (const auto& g : groups) counted += g.Available(min_ready, now);
        for (const Object& o : pods) {
          const Pod& p = *std::get<std::shared_ptr<const Pod>>(o);
          const OwnerReference* ref = ControllerOf(p.metadata);
          if ((ref ? ref->uid : "") != uid || p.metadata.namespace_ != ns) continue;
          if (IsPodActive(DocOf(o)) && IsPodAvailable(DocOf(o), min_ready, now)) ++available;
        }
        EXPECT_EQ(counted, available) << uid << " " << ns << " minReady " << min_ready;
      }
    }
  }
}

TEST(PodCensusTest, RandomEventsAndRelistsKeepTheCountsEqualToARecount) {
  std::mt19937 rng(7);
  PodCensus census;
  std::map<std::string, Object> store;  // what the informer holds
  auto random_pod = [&](std::string* key) {
    const std::string ns = kNamespaces[rng() % 2];
    const std::string name = "p" + std::to_string(rng() % 30);
    *key = ns + "/" + name;
    return Decode(PodDoc(ns, name, rng));
  };
  int checked_nonempty = 0;
  for (int step = 0; step < 3000; ++step) {
    if (step % 250 == 249) {
      // A relist: the deletions, updates and additions that turn the store into a new list.
      std::map<std::string, Object> fresh;
      for (int i = 0; i < 40; ++i) {
        std::string key;
        Object o = random_pod(&key);
        fresh.insert_or_assign(key, o);
      }
      for (auto it = store.begin(); it != store.end();) {
        if (fresh.count(it->first)) {
          ++it;
          continue;
        }
        census.Delete(it->second);
        it = store.erase(it);
      }
      for (auto& [key, o] : fresh) {
        if (auto old = store.find(key); old != store.end()) {
          census.Update(old->second, o);
          old->second = o;
        } else {
          census.Add(o);
          store.emplace(key, o);
        }
      }
    } else {
      std::string key;
      Object o = random_pod(&key);
      auto old = store.find(key);
      if (old == store.end()) {
        census.Add(o);
        store.emplace(key, o);
      } else if (rng() % 4 == 0) {
        census.Delete(old->second);
        store.erase(old);
      } else {
        census.Update(old->second, o);
        old->second = o;
      }
    }
    ExpectMatchesRecount(census, Values(store));
    if (HasFatalFailure()) return;
    if (!census.Groups("uid-a", "one").empty()) ++checked_nonempty;
  }
  EXPECT_GT(checked_nonempty, 1000);  // the sequences did exercise owned pods
}

TEST(PodCensusTest, UpdatesMoveAPodBetweenOwnersGroupsAndReadiness) {
  PodCensus census;
  auto pod = [](const std::string& uid, const std::string& app, const std::string& phase,
                bool ready, bool deleting) {
    Json doc = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "p"}, {"namespace", "one"}, {"labels", {{"app", app}}}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "pause"}}}}}},
                {"status",
                 {{"phase", phase},
                  {"conditions",
                   {{{"type", "Ready"},
                     {"status", ready ? "True" : "False"},
                     {"lastTransitionTime", "2027-01-01T00:00:00Z"}}}}}}};
    if (!uid.empty()) {
      doc["metadata"]["ownerReferences"] = {
          {{"kind", "ReplicaSet"}, {"name", "x"}, {"uid", uid}, {"controller", true}}};
    }
    if (deleting) doc["metadata"]["deletionTimestamp"] = "2027-01-01T00:00:00Z";
    return Decode(doc);
  };
  const UnixTime t = *ParseTimestamp("2027-01-01T00:00:00Z");
  Object p1 = pod("", "web", "Pending", false, false);
  census.Add(p1);
  ASSERT_EQ(census.Groups("", "one").size(), 1u);
  EXPECT_EQ(census.Groups("", "one")[0].active, 1);

  Object p2 = pod("uid-a", "web", "Running", true, false);  // adopted, and ready
  census.Update(p1, p2);
  EXPECT_TRUE(census.Groups("", "one").empty());
  auto a = census.Groups("uid-a", "one");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].labels, (Labels{{"app", "web"}}));
  EXPECT_EQ(a[0].active, 1);
  EXPECT_EQ(a[0].ready, 1);
  EXPECT_EQ(a[0].ready_since, (std::map<UnixTime, int64_t>{{t, 1}}));
  EXPECT_EQ(a[0].Available(30, t + 30), 0);
  EXPECT_EQ(a[0].Available(30, t + 31), 1);

  Object p3 = pod("uid-a", "db", "Running", false, false);  // relabeled, not ready
  census.Update(p2, p3);
  a = census.Groups("uid-a", "one");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].labels, (Labels{{"app", "db"}}));
  EXPECT_EQ(a[0].ready, 0);
  EXPECT_TRUE(a[0].ready_since.empty());

  Object p4 = pod("uid-b", "db", "Running", true, true);  // handed over, being deleted
  census.Update(p3, p4);
  EXPECT_TRUE(census.Groups("uid-a", "one").empty());
  EXPECT_TRUE(census.Groups("uid-b", "one").empty());
  Object p5 = pod("uid-b", "db", "Succeeded", true, false);  // finished: not active
  census.Update(p4, p5);
  EXPECT_TRUE(census.Groups("uid-b", "one").empty());
  Object p6 = pod("uid-b", "db", "Running", true, false);
  census.Update(p5, p6);
  EXPECT_EQ(census.Groups("uid-b", "one").size(), 1u);
  census.Delete(p6);
  EXPECT_TRUE(census.Groups("uid-b", "one").empty());
}

// Through an informer: a watch answered 410 Gone relists, and the census follows the
// difference the relist delivers (a pod gone, one re-owned and made ready, one finished).
TEST(PodCensusTest, FollowsAnInformerRelist) {
  std::atomic<int> lists{0}, watches{0};
  auto item = [](const std::string& name, const std::string& uid, const std::string& phase,
                 bool ready, int rv) {
    Json doc = {{"metadata",
                 {{"name", name},
                  {"namespace", "one"},
                  {"resourceVersion", std::to_string(rv)},
                  {"labels", {{"app", "web"}}},
                  {"ownerReferences",
                   {{{"kind", "ReplicaSet"}, {"name", "x"}, {"uid", uid}, {"controller", true}}}}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "pause"}}}}}},
                {"status",
                 {{"phase", phase},
                  {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
    return doc;
  };
  std::vector<std::shared_ptr<net::StreamSink>> open;
  std::mutex open_mu;
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.Query("watch")) {
      const int n = watches++;
      r.stream = [&, n](std::shared_ptr<net::StreamSink> sink) {
        if (n == 0) {
          sink->Write(R"({"type":"ERROR","object":{"kind":"Status","code":410}})"
                      "\n");
          sink->Close();
        } else {
          std::lock_guard lock(open_mu);
          open.push_back(sink);  // held open until the test ends
        }
      };
      return r;
    }
    Json list = {{"kind", "PodList"},
                 {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", lists == 0 ? "10" : "20"}}}};
    list["items"] =
        lists++ == 0
            ? Json{item("a", "uid-a", "Running", true, 1), item("b", "uid-a", "Running", false, 2),
                   item("c", "uid-a", "Running", true, 3)}
            : Json{item("b", "uid-b", "Running", true, 15), item("c", "uid-a", "Failed", true, 16),
                   item("d", "uid-a", "Pending", false, 17)};
    r.body = list.dump();
    return r;
  });
  ASSERT_TRUE(server.ok());
  auto rest = client::RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "",
                              client::RestOptions{.qps = 0});
  SharedInformer pods(rest.get(), "/api/v1/pods", "Pod", nullptr);
  PodCensus census;
  census.Watch(&pods);
  pods.Start();
  for (int i = 0; i < 100 && watches < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pods.Stop();
  ASSERT_EQ(lists.load(), 2);
  ExpectMatchesRecount(census, pods.List());
  auto a = census.Groups("uid-a", "one");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].active, 1);  // d; a gone, c finished
  EXPECT_EQ(a[0].ready, 0);
  auto b = census.Groups("uid-b", "one");
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].ready, 1);
}

}  // namespace
}  // namespace berth::controllers
