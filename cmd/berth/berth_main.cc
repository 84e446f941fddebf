// The berth binary: the command line with the in-tree plugins only.
#include "berth/main.h"

int main(int argc, char** argv) { return berth::Main(argc, argv); }
