// A scheduler binary of one's own: every berth subcommand, with the ToNodeName plugin compiled
// in by one registration (no --plugin-library needed).
#include <berth/main.h>

berth::PluginRegistration ToNodeNameRegistration();  // examples/plugins/tonodename_plugin.cc

int main(int argc, char** argv) { return berth::Main(argc, argv, {ToNodeNameRegistration()}); }
