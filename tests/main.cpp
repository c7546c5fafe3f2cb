#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "model/gemm_blocking.hpp"

// The suites compute the same bits as the shadowsync binary: the same pinned
// product blocking (model/gemm_blocking.hpp).
int main(int argc, char** argv) {
  model::pin_gemm_blocking();
  return doctest::Context(argc, argv).run();
}
