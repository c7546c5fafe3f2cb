// Wrappers that clear OpenSSL's per-thread error queue before each SSL I/O
// call of libcaf_openssl, turn read-ahead on, and skip libcaf_openssl's
// SIGPIPE masking once SIGPIPE is ignored; the why is in openssl_shim.hpp.
#include "deploy/openssl_shim.hpp"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <openssl/err.h>
#include <openssl/ssl.h>

namespace {

// libssl's own definition of `name`, looked up once (thread-safe static init).
template <class Fn>
Fn next_definition(const char* name) {
  auto* f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
  if (f == nullptr) {
    std::fprintf(stderr, "fatal: openssl_shim: %s not found after the executable (%s)\n", name,
                 dlerror());
    std::abort();
  }
  return f;
}

// The executable segment of libcaf_openssl, found once.
struct code_range {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
};

code_range find_caf_openssl() {
  code_range r;
  dl_iterate_phdr(
    [](dl_phdr_info* info, size_t, void* out) -> int {
      if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "libcaf_openssl") == nullptr)
        return 0;
      for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0) {
          auto* range = static_cast<code_range*>(out);
          range->lo = info->dlpi_addr + ph.p_vaddr;
          range->hi = range->lo + ph.p_memsz;
        }
      }
      return 1;
    },
    &r);
  return r;
}

std::atomic<bool> sigpipe_ignored{false};

// True when SIGPIPE is ignored and `return_address` is in libcaf_openssl.
bool skip_for(void* return_address) {
  if (!sigpipe_ignored.load(std::memory_order_acquire))
    return false;
  static const code_range caf = find_caf_openssl();
  auto a = reinterpret_cast<std::uintptr_t>(return_address);
  return a >= caf.lo && a < caf.hi;
}

} // namespace

extern "C" {

int SSL_read(SSL* ssl, void* buf, int num) {
  static const auto next = next_definition<int (*)(SSL*, void*, int)>("SSL_read");
  ERR_clear_error();
  return next(ssl, buf, num);
}

int SSL_write(SSL* ssl, const void* buf, int num) {
  static const auto next = next_definition<int (*)(SSL*, const void*, int)>("SSL_write");
  ERR_clear_error();
  return next(ssl, buf, num);
}

int SSL_accept(SSL* ssl) {
  static const auto next = next_definition<int (*)(SSL*)>("SSL_accept");
  ERR_clear_error();
  return next(ssl);
}

int SSL_connect(SSL* ssl) {
  static const auto next = next_definition<int (*)(SSL*)>("SSL_connect");
  ERR_clear_error();
  return next(ssl);
}

SSL* SSL_new(SSL_CTX* ctx) {
  static const auto next = next_definition<SSL* (*)(SSL_CTX*)>("SSL_new");
  SSL* ssl = next(ctx);
  if (ssl != nullptr) {
    SSL_set_read_ahead(ssl, 1);
    SSL_set_default_read_buffer_len(ssl, runtime::tls_read_buffer_bytes);
  }
  return ssl;
}

int SSL_pending(const SSL* ssl) {
  static const auto next = next_definition<int (*)(const SSL*)>("SSL_pending");
  int decrypted = next(ssl);
  if (decrypted == 0 && SSL_has_pending(ssl) == 1)
    return INT_MAX; // a record read ahead: read on (openssl_shim.hpp)
  return decrypted;
}

int pthread_sigmask(int how, const sigset_t* set, sigset_t* old) {
  static const auto next =
    next_definition<int (*)(int, const sigset_t*, sigset_t*)>("pthread_sigmask");
  if (skip_for(__builtin_return_address(0)))
    return 0; // the block and its restore both skipped: the mask never changes
  return next(how, set, old);
}

int sigtimedwait(const sigset_t* set, siginfo_t* info, const struct timespec* timeout) {
  static const auto next =
    next_definition<int (*)(const sigset_t*, siginfo_t*, const struct timespec*)>(
      "sigtimedwait");
  if (skip_for(__builtin_return_address(0))) {
    errno = EAGAIN; // no SIGPIPE is ever pending: it is ignored
    return -1;
  }
  return next(set, info, timeout);
}

} // extern "C"

namespace runtime {

bool openssl_error_shim_active() {
  return dlsym(RTLD_DEFAULT, "SSL_read") == reinterpret_cast<void*>(&SSL_read) &&
         dlsym(RTLD_DEFAULT, "SSL_new") == reinterpret_cast<void*>(&SSL_new) &&
         dlsym(RTLD_DEFAULT, "SSL_pending") == reinterpret_cast<void*>(&SSL_pending) &&
         dlsym(RTLD_DEFAULT, "pthread_sigmask") == reinterpret_cast<void*>(&pthread_sigmask);
}

void ignore_sigpipe_for_tls() {
  std::signal(SIGPIPE, SIG_IGN);
  sigpipe_ignored.store(true, std::memory_order_release);
}

bool tls_sigpipe_calls_skipped() {
  return sigpipe_ignored.load(std::memory_order_acquire) && find_caf_openssl().hi != 0;
}

} // namespace runtime
