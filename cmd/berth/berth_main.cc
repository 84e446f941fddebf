// The berth binary: the command line with the in-tree plugins only.
#include "berth/main.h"

#ifdef BERTH_WITH_MIMALLOC
#include <mimalloc.h>
#endif

int main(int argc, char** argv) {
#ifdef BERTH_WITH_MIMALLOC
  // Referenced so that the linker keeps libmimalloc, whose malloc then serves the whole process
  // (see CMakeLists.txt).
  (void)mi_version();
#endif
  return berth::Main(argc, argv);
}
