// Every heap block of 32 bytes or more starts on a 64-byte boundary (the
// widest vector of every instruction-set level), whoever allocates it: a
// std::vector<float> of a message, a table, a workspace.
//
// Why: Eigen's reductions start their vector loop at the first element on a
// vector boundary (Redux.h: first_default_aligned), so the order of a sum,
// and its last bits, followed where malloc happened to put the buffer. With
// SSE2 malloc's 16 bytes were always enough; with AVX2 (32) and AVX-512 (64)
// two runs of one command in one process gave train NE 1.0105650166 and
// 1.0105650174. Replacing the global operator new (a replaceable function;
// this definition wins over libstdc++'s in every library of the process)
// makes the start of every such buffer a constant.
#include <cstdlib>
#include <new>

#include "model/gemm_blocking.hpp"

namespace {

constexpr std::size_t heap_align = 64;
constexpr std::size_t small_block = 32; // below: no vector loop to start

void* allocate(std::size_t n) noexcept {
  if (n < small_block)
    return std::malloc(n == 0 ? 1 : n);
  return std::aligned_alloc(heap_align, (n + heap_align - 1) / heap_align * heap_align);
}

void* allocate_or_throw(std::size_t n) {
  void* p = allocate(n);
  while (!p) {
    std::new_handler h = std::get_new_handler();
    if (!h)
      throw std::bad_alloc();
    h();
    p = allocate(n);
  }
  return p;
}

} // namespace

namespace model {
bool aligned_heap_installed() { return true; }
} // namespace model

void* operator new(std::size_t n) { return allocate_or_throw(n); }
void* operator new[](std::size_t n) { return allocate_or_throw(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
