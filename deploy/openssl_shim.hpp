#pragma once
// Keeps one TLS connection's failure on that connection (see openssl_shim.cpp).
//
// libcaf_openssl 0.17.6 calls SSL_read / SSL_write / SSL_accept / SSL_connect
// without clearing OpenSSL's per-thread error queue first and never drains it.
// Every TLS socket of a node shares the middleman's one I/O thread, so an error
// queued by one connection (a peer killed without a TLS goodbye: "unexpected
// eof while reading"; any failed handshake, e.g. a port scanner or a client
// without a certificate) makes SSL_get_error report SSL_ERROR_SSL on the next
// would-block read of a *healthy* connection, and CAF closes that one too.
// This is what made a SIGKILL of one trainer node drop the coordinator link of
// another (tests/system/multinode_test.sh, about one run in two).
//
// openssl_shim.cpp defines those four functions in the executable. The dynamic
// linker resolves libcaf_openssl's references to the executable's definitions
// first; each clears the calling thread's error queue and forwards to libssl's
// own (dlsym(RTLD_NEXT)).
//
// Read-ahead: without it, OpenSSL reads each TLS record with two read()
// calls (its 5-byte header, then its body), so a 100 KB lookup reply costs
// 14 system calls to receive, and in a VM each costs more than decrypting
// 16 KB. The SSL_new wrapper turns read-ahead on with a 128 KiB buffer: one
// read() takes whatever the socket holds, several records at once. A record
// read ahead but not yet decrypted is in the SSL object, not in the socket,
// so epoll would not report it; libcaf_openssl asks SSL_pending whether to
// read on (caf::io::network::stream's read loop), and SSL_pending counts
// decrypted bytes only. The SSL_pending wrapper therefore also answers "more
// to read" when SSL_has_pending says a record is buffered (the read loop then
// calls SSL_read until it returns no bytes: a partial record waits for the
// socket as before). libcaf_openssl is SSL_pending's only caller in the
// process (within libssl only BIO_f_ssl calls it, which nothing here uses).
//
// SIGPIPE: libcaf_openssl wraps every SSL call in three system calls
// (pthread_sigmask to block SIGPIPE, sigtimedwait to drop one that came,
// pthread_sigmask to restore), about 4 us here, for every record read and
// every write: on a 3-node cluster on loopback over TLS that was 15 % of the
// throughput. A process that ignores SIGPIPE needs none of it: a write to a
// closed socket fails with EPIPE, which OpenSSL reports as the error it is.
// ignore_sigpipe_for_tls() ignores SIGPIPE for the whole process, and from
// then on the pthread_sigmask and sigtimedwait wrappers return at once when
// their caller is libcaf_openssl's code (the return address is in its
// executable segment); every other caller is forwarded to libc unchanged.

namespace runtime {

// Bytes OpenSSL reads from a socket at once (SSL_set_default_read_buffer_len).
constexpr int tls_read_buffer_bytes = 128 * 1024;

// True when libcaf_openssl's calls go through the wrappers: the process-wide
// definitions of SSL_read, SSL_new, SSL_pending and pthread_sigmask are this
// executable's. Calling it also makes the linker keep the wrappers' object file.
bool openssl_error_shim_active();

// Ignores SIGPIPE in the whole process and lets the wrappers skip
// libcaf_openssl's signal-mask system calls (see above). Call before the
// first TLS connection; there is no way back.
void ignore_sigpipe_for_tls();

// True once ignore_sigpipe_for_tls() ran and libcaf_openssl's code was found
// (its calls to pthread_sigmask and sigtimedwait are then skipped).
bool tls_sigpipe_calls_skipped();

} // namespace runtime
