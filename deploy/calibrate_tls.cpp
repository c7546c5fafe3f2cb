// Calibrate's message costs over mutual TLS; the why is in calibrate_tls.hpp.
#include "deploy/calibrate_tls.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/all.hpp>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "deploy/openssl_shim.hpp"

namespace runtime {

namespace {

namespace fs = std::filesystem;

struct key_free {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct x509_free {
  void operator()(X509* x) const { X509_free(x); }
};
struct file_close {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

// A self-signed P-256 certificate valid for an hour, which is its own CA:
// both sides present it and trust it. Writes key.pem and cert.pem in `dir`.
std::optional<std::string> make_certificate(const fs::path& dir) {
  std::unique_ptr<EVP_PKEY, key_free> key{EVP_EC_gen("P-256")};
  std::unique_ptr<X509, x509_free> x{X509_new()};
  if (!key || !x)
    return std::string("calibrate: cannot make a key for the TLS measurement");
  X509_set_version(x.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(x.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(x.get()), -60);
  X509_gmtime_adj(X509_getm_notAfter(x.get()), 3600);
  X509_set_pubkey(x.get(), key.get());
  X509_NAME* name = X509_get_subject_name(x.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("shadowsync-calibrate"), -1,
                             -1, 0);
  X509_set_issuer_name(x.get(), name);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, x.get(), x.get(), nullptr, nullptr, 0);
  X509_EXTENSION* ca = X509V3_EXT_conf_nid(nullptr, &ctx, NID_basic_constraints,
                                           "critical,CA:TRUE");
  const bool added = ca && X509_add_ext(x.get(), ca, -1) == 1;
  X509_EXTENSION_free(ca);
  if (!added || X509_sign(x.get(), key.get(), EVP_sha256()) <= 0)
    return std::string("calibrate: cannot sign the TLS measurement's certificate");
  std::unique_ptr<std::FILE, file_close> kf{std::fopen((dir / "key.pem").c_str(), "wx")};
  std::unique_ptr<std::FILE, file_close> cf{std::fopen((dir / "cert.pem").c_str(), "wx")};
  if (!kf || !cf ||
      PEM_write_PrivateKey(kf.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_X509(cf.get(), x.get()) != 1)
    return "calibrate: cannot write the TLS measurement's certificate in " + dir.string();
  return std::nullopt;
}

remote_link tls_link(const fs::path& dir) {
  remote_link l;
  l.configure = [dir](caf::actor_system_config& cfg) {
    cfg.load<caf::openssl::manager>();
    cfg.set("openssl.certificate", (dir / "cert.pem").string());
    cfg.set("openssl.key", (dir / "key.pem").string());
    cfg.set("openssl.cafile", (dir / "cert.pem").string());
  };
  l.publish = [](caf::actor_system& sys, const caf::actor& a,
                 std::uint16_t& port) -> std::optional<std::string> {
    auto p = caf::openssl::publish(a, 0, "127.0.0.1", true);
    if (!p)
      return "calibrate: cannot listen with TLS on 127.0.0.1: " + sys.render(p.error());
    port = *p;
    return std::nullopt;
  };
  l.connect = [](caf::actor_system& sys, std::uint16_t port,
                 caf::actor& out) -> std::optional<std::string> {
    auto p = caf::openssl::remote_actor(sys, "127.0.0.1", port);
    if (!p)
      return "calibrate: cannot connect with TLS to 127.0.0.1:" + std::to_string(port) + ": " +
             sys.render(p.error());
    out = *p;
    return std::nullopt;
  };
  return l;
}

} // namespace

std::optional<std::string> measure_remote_tls(double local_message_us, remote_costs& out) {
  if (!openssl_error_shim_active())
    return std::string("calibrate: the OpenSSL wrappers of deploy/openssl_shim.hpp are not in "
                       "effect, so TLS would not cost what it costs a node");
  ignore_sigpipe_for_tls(); // as a node does before its first TLS connection
  std::error_code ec;
  auto pattern = (fs::temp_directory_path(ec) / "shadowsync-calibrate-XXXXXX").string();
  if (ec || !mkdtemp(pattern.data()))
    return "calibrate: cannot make a temporary folder for the TLS measurement's certificate "
           "under " + fs::temp_directory_path(ec).string() + " (set TMPDIR)";
  const fs::path dir = pattern;
  auto e = make_certificate(dir);
  if (!e)
    e = measure_remote(local_message_us, out, tls_link(dir));
  for (const char* f : {"key.pem", "cert.pem"}) // only what make_certificate wrote
    fs::remove(dir / f, ec);
  fs::remove(dir, ec);
  return e;
}

} // namespace runtime
