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
// own (dlsym(RTLD_NEXT)). Nothing else changes.

namespace runtime {

// True when libcaf_openssl's calls go through the wrappers: the process-wide
// definition of SSL_read is this executable's. Calling it also makes the
// linker keep the wrappers' object file.
bool openssl_error_shim_active();

} // namespace runtime
