// The OpenSSL wrappers of deploy/openssl_shim.hpp, in this test binary as in
// shadowsync: read-ahead is on for every SSL object, SSL_pending reports a
// record read ahead but not yet decrypted (without that, libcaf_openssl's
// read loop would stop with a whole message inside OpenSSL and epoll silent),
// and once SIGPIPE is ignored the signal-mask wrappers still forward every
// caller outside libcaf_openssl. A real TLS 1.3 session over memory BIOs,
// with the suite's certificates.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <climits>
#include <csignal>
#include <memory>
#include <string>

#include <openssl/bio.h>
#include <openssl/ssl.h>

#include "deploy/openssl_shim.hpp"
#include "tests/deploy/test_certs.hpp"

namespace {

struct ctx_deleter {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
struct ssl_deleter {
  void operator()(SSL* s) const { SSL_free(s); }
};
using ctx_ptr = std::unique_ptr<SSL_CTX, ctx_deleter>;
using ssl_ptr = std::unique_ptr<SSL, ssl_deleter>;

// Moves what `from` wrote into what `to` reads; the bytes moved.
int pump(SSL* from, SSL* to) {
  char buf[4096];
  int moved = 0;
  for (;;) {
    int n = BIO_read(SSL_get_wbio(from), buf, sizeof buf);
    if (n <= 0)
      return moved;
    REQUIRE(BIO_write(SSL_get_rbio(to), buf, n) == n);
    moved += n;
  }
}

// A client and a server SSL over memory BIOs, handshake done.
struct session_pair {
  ctx_ptr server_ctx{SSL_CTX_new(TLS_server_method())};
  ctx_ptr client_ctx{SSL_CTX_new(TLS_client_method())};
  ssl_ptr server;
  ssl_ptr client;
  session_pair() {
    auto tls = test::certs().tls("coord");
    REQUIRE(SSL_CTX_use_certificate_chain_file(server_ctx.get(), tls.certificate.c_str()) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(server_ctx.get(), tls.key.c_str(), SSL_FILETYPE_PEM) == 1);
    SSL_CTX_set_verify(client_ctx.get(), SSL_VERIFY_NONE, nullptr);
    server.reset(SSL_new(server_ctx.get()));
    client.reset(SSL_new(client_ctx.get()));
    REQUIRE(server);
    REQUIRE(client);
    SSL_set_bio(server.get(), BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
    SSL_set_bio(client.get(), BIO_new(BIO_s_mem()), BIO_new(BIO_s_mem()));
    SSL_set_accept_state(server.get());
    SSL_set_connect_state(client.get());
    for (int round = 0; round < 10; ++round) {
      SSL_do_handshake(client.get());
      pump(client.get(), server.get());
      SSL_do_handshake(server.get());
      pump(server.get(), client.get());
      if (SSL_is_init_finished(client.get()) && SSL_is_init_finished(server.get()))
        return;
    }
    FAIL("no TLS handshake in 10 rounds");
  }
};

} // namespace

TEST_CASE("openssl shim: every SSL object reads ahead with the shim's buffer") {
  REQUIRE(runtime::openssl_error_shim_active());
  session_pair p;
  CHECK(SSL_get_read_ahead(p.server.get()) == 1);
  CHECK(SSL_get_read_ahead(p.client.get()) == 1);
}

TEST_CASE("openssl shim: a record read ahead but not decrypted counts as pending") {
  session_pair p;
  // Two records in the server's input; one SSL_read reads both from the
  // (memory) socket and decrypts the first.
  REQUIRE(SSL_write(p.client.get(), "A", 1) == 1);
  REQUIRE(SSL_write(p.client.get(), "B", 1) == 1);
  REQUIRE(pump(p.client.get(), p.server.get()) > 0);
  char c = 0;
  REQUIRE(SSL_read(p.server.get(), &c, 1) == 1);
  CHECK(c == 'A');
  // Nothing decrypted is left, the second record is: libcaf_openssl's
  // must_read_more(threshold) must say "read on" for any threshold.
  REQUIRE(SSL_has_pending(p.server.get()) == 1);
  CHECK(SSL_pending(p.server.get()) == INT_MAX);
  REQUIRE(SSL_read(p.server.get(), &c, 1) == 1);
  CHECK(c == 'B');
  CHECK(SSL_has_pending(p.server.get()) == 0);
  CHECK(SSL_pending(p.server.get()) == 0);
  // Decrypted bytes are reported as they are.
  REQUIRE(SSL_write(p.client.get(), "CDE", 3) == 3);
  pump(p.client.get(), p.server.get());
  REQUIRE(SSL_read(p.server.get(), &c, 1) == 1);
  CHECK(SSL_pending(p.server.get()) == 2);
}

TEST_CASE("openssl shim: with SIGPIPE ignored, other callers' signal masks still change") {
  CHECK_FALSE(runtime::tls_sigpipe_calls_skipped());
  runtime::ignore_sigpipe_for_tls();
  // This binary does not link libcaf_openssl (shadowsync does): load it so
  // the wrappers can find its code.
  void* caf_openssl = dlopen("libcaf_openssl.so.0.17.6", RTLD_NOW | RTLD_GLOBAL);
  const std::string why = caf_openssl != nullptr ? "" : dlerror();
  INFO(why);
  REQUIRE(caf_openssl != nullptr);
  CHECK(runtime::tls_sigpipe_calls_skipped());
  struct sigaction now {};
  REQUIRE(sigaction(SIGPIPE, nullptr, &now) == 0);
  const bool ignored = now.sa_handler == SIG_IGN;
  CHECK(ignored);
  sigset_t usr2, before, after;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  REQUIRE(pthread_sigmask(SIG_BLOCK, &usr2, &before) == 0);
  REQUIRE(pthread_sigmask(SIG_BLOCK, nullptr, &after) == 0);
  CHECK(sigismember(&after, SIGUSR2) == 1);
  REQUIRE(pthread_sigmask(SIG_SETMASK, &before, nullptr) == 0);
  REQUIRE(pthread_sigmask(SIG_BLOCK, nullptr, &after) == 0);
  CHECK(sigismember(&after, SIGUSR2) == sigismember(&before, SIGUSR2));
  // And a signal this thread waits for is still taken by sigtimedwait.
  REQUIRE(pthread_sigmask(SIG_BLOCK, &usr2, &before) == 0);
  REQUIRE(raise(SIGUSR2) == 0);
  timespec zero{};
  CHECK(sigtimedwait(&usr2, nullptr, &zero) == SIGUSR2);
  REQUIRE(pthread_sigmask(SIG_SETMASK, &before, nullptr) == 0);
}
