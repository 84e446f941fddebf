#include "extender_command.h"

#include <fmt/format.h>

#include <iostream>

#include "api/read_file.h"

namespace berth::cmd {
namespace {

void AddServingFlags(CLI::App* app, ExtenderCommand* c) {
  app->add_option("--port", c->port, "Port to serve on (0: any free port)");
  app->add_option("--bind-address", c->bind_address, "Address to serve on");
  app->add_option("--tls-cert-file", c->tls_cert_file, "Serving certificate (PEM): serve HTTPS");
  app->add_option("--tls-private-key-file", c->tls_key_file, "Key of the serving certificate");
  app->add_option("--threads", c->threads, "Request threads");
}

}  // namespace

CLI::App* AddExtenderCommand(CLI::App& app, ExtenderCommand* c) {
  CLI::App* ext = app.add_subcommand("extender", "Run an example scheduler extender");
  ext->require_subcommand(1);
  c->label_rule = ext->add_subcommand(
      "label-rule",
      "Pods with a given label may only land on the given nodes (filter, prioritize)");
  c->label_rule->add_option("--label", c->label, "KEY=VALUE the rule applies to")->required();
  c->label_rule->add_option("--nodes", c->nodes, "Comma-separated node names")->required();
  c->label_rule->add_option("--filter-verb", c->label_rule_options.filter_verb, "Filter verb");
  c->label_rule->add_option("--prioritize-verb", c->label_rule_options.prioritize_verb,
                            "Prioritize verb");
  AddServingFlags(c->label_rule, c);

  c->network_traffic = ext->add_subcommand(
      "network-traffic", "Prefer nodes with less received network traffic (Prometheus)");
  auto& nt = c->network_traffic_options;
  c->network_traffic
      ->add_option("--prometheus-address", nt.prometheus_address,
                   "Prometheus server, e.g. http://127.0.0.1:9090")
      ->required();
  c->network_traffic->add_option("--network-interface", nt.network_interface,
                                 "Network device whose received bytes count");
  c->network_traffic->add_option("--time-range-minutes", nt.time_range_minutes,
                                 "Window of the traffic sum");
  c->network_traffic->add_option("--node-label", nt.node_label, "Series label that names the node");
  c->network_traffic->add_option("--prioritize-verb", nt.prioritize_verb, "Prioritize verb");
  AddServingFlags(c->network_traffic, c);
  return ext;
}

int RunExtenderCommand(ExtenderCommand& c) {
  extender::ExtenderServer server;
  if (*c.label_rule) {
    auto options = extender::ParseLabelRule(c.label, c.nodes);
    if (!options.ok()) {
      std::cerr << "error: " << options.error().message << "\n";
      return 1;
    }
    options->filter_verb = c.label_rule_options.filter_verb;
    options->prioritize_verb = c.label_rule_options.prioritize_verb;
    extender::RegisterLabelRule(server, *options);
  } else {
    if (VoidResult r = extender::RegisterNetworkTraffic(server, c.network_traffic_options);
        !r.ok()) {
      std::cerr << "error: " << r.error().message << "\n";
      return 1;
    }
  }
  extender::ServerOptions so;
  so.bind_address = c.bind_address;
  so.port = c.port;
  so.threads = c.threads;
  if (!c.tls_cert_file.empty() || !c.tls_key_file.empty()) {
    auto cert = ReadFileText(c.tls_cert_file, kMaxConfigBytes);
    auto key = ReadFileText(c.tls_key_file, kMaxConfigBytes);
    for (const auto* r : {&cert, &key}) {
      if (!r->ok()) {
        std::cerr << "error: " << r->error().message << "\n";
        return 1;
      }
    }
    so.tls_cert_pem = *cert;
    so.tls_key_pem = *key;
  }
  return server.ServeUntilSignal(so);
}

}  // namespace berth::cmd
