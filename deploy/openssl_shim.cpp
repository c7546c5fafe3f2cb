// Wrappers that clear OpenSSL's per-thread error queue before each SSL I/O
// call of libcaf_openssl; the why is in openssl_shim.hpp.
#include "deploy/openssl_shim.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

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

} // extern "C"

namespace runtime {

bool openssl_error_shim_active() {
  return dlsym(RTLD_DEFAULT, "SSL_read") == reinterpret_cast<void*>(&SSL_read);
}

} // namespace runtime
