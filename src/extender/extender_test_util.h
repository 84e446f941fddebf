// What the extender tests share: node infos, their names, and an extender configuration whose
// verbs are named after the calls.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/node_info.h"
#include "config/types.h"
#include "testing/builders.h"

namespace berth::extender::test_util {

inline std::vector<std::shared_ptr<NodeInfo>> Infos(const std::vector<std::string>& names) {
  std::vector<std::shared_ptr<NodeInfo>> out;
  for (const auto& n : names)
    out.push_back(std::make_shared<NodeInfo>(
        testing::MakeNode().Name(n).Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj()));
  return out;
}

inline std::vector<const NodeInfo*> Ptrs(const std::vector<std::shared_ptr<NodeInfo>>& infos) {
  std::vector<const NodeInfo*> out;
  for (const auto& i : infos) out.push_back(i.get());
  return out;
}

inline std::vector<std::string> Names(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> out;
  for (const NodeInfo* n : nodes) out.push_back(n->name());
  return out;
}

inline config::Extender Config(const std::string& url) {
  config::Extender c;
  c.url_prefix = url;
  c.filter_verb = "filter";
  c.prioritize_verb = "prioritize";
  c.bind_verb = "bind";
  c.preempt_verb = "preempt";
  c.weight = 1;
  return c;
}

}  // namespace berth::extender::test_util
