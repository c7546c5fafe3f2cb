// Node identities: certificates, CNs and challenge signatures with libcrypto
// (see node_identity.hpp for the protocol).
#include "deploy/node_identity.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <vector>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

namespace runtime {

namespace {

template <class T, void (*Free)(T*)>
struct freer {
  void operator()(T* p) const { Free(p); }
};
using bio_ptr = std::unique_ptr<BIO, freer<BIO, BIO_free_all>>;
using x509_ptr = std::unique_ptr<X509, freer<X509, X509_free>>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, freer<EVP_PKEY, EVP_PKEY_free>>;
using md_ctx_ptr = std::unique_ptr<EVP_MD_CTX, freer<EVP_MD_CTX, EVP_MD_CTX_free>>;
using store_ptr = std::unique_ptr<X509_STORE, freer<X509_STORE, X509_STORE_free>>;
using store_ctx_ptr = std::unique_ptr<X509_STORE_CTX, freer<X509_STORE_CTX, X509_STORE_CTX_free>>;

void free_chain(STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); }
using chain_ptr = std::unique_ptr<STACK_OF(X509), freer<STACK_OF(X509), free_chain>>;

// The oldest queued libcrypto error as text (and the queue cleared).
std::string crypto_error() {
  const auto code = ERR_get_error();
  ERR_clear_error();
  if (code == 0)
    return "no detail";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

std::string hex(const unsigned char* p, std::size_t n) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) {
    out += digits[p[i] >> 4];
    out += digits[p[i] & 15];
  }
  return out;
}

bool unhex(const std::string& s, std::vector<unsigned char>& out) {
  auto value = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (s.size() % 2 != 0)
    return false;
  out.clear();
  for (std::size_t i = 0; i < s.size(); i += 2) {
    const int hi = value(s[i]), lo = value(s[i + 1]);
    if (hi < 0 || lo < 0)
      return false;
    out.push_back(static_cast<unsigned char>(hi * 16 + lo));
  }
  return true;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = s.str();
  return true;
}

// The leaf certificate and any certificates after it in one PEM text.
bool parse_pem_chain(const std::string& pem, x509_ptr& leaf, chain_ptr& rest) {
  bio_ptr bio{BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()))};
  if (!bio)
    return false;
  leaf.reset(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!leaf)
    return false;
  rest.reset(sk_X509_new_null());
  while (X509* more = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr))
    sk_X509_push(rest.get(), more);
  ERR_clear_error(); // the end of the text reads as an error
  return true;
}

// The one CN of a certificate's subject; empty when there is none or more.
std::string common_name(X509* cert) {
  X509_NAME* subject = X509_get_subject_name(cert);
  const int at = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (at < 0 || X509_NAME_get_index_by_NID(subject, NID_commonName, at) >= 0)
    return {};
  ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, at));
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, data);
  if (n < 0)
    return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

// Ed25519/Ed448 sign the message itself; other keys a SHA-256 digest.
const EVP_MD* digest_for(EVP_PKEY* key) {
  const int id = EVP_PKEY_get_id(key);
  return id == EVP_PKEY_ED25519 || id == EVP_PKEY_ED448 ? nullptr : EVP_sha256();
}

} // namespace

struct node_identity::impl {
  pkey_ptr key;
  std::string certificate; // PEM, as read
  std::string name;        // its CN
  store_ptr store;         // the cluster CA
};

node_identity::node_identity() : impl_(std::make_unique<impl>()) {}
node_identity::~node_identity() = default;

const std::string& node_identity::name() const { return impl_->name; }

std::string make_nonce() {
  unsigned char buf[32];
  if (RAND_bytes(buf, sizeof buf) != 1)
    return {};
  return hex(buf, sizeof buf);
}

std::string identity_statement(const std::string& purpose, const std::string& id,
                               const std::string& nonce, const std::string& context) {
  // Each field on its own line; ids, nonces and run ids contain no newline
  // (ids are [a-z0-9_-]+, the others hex), so the fields cannot be shifted.
  return "shadowsync node identity v1\n" + purpose + "\n" + id + "\n" + nonce + "\n" + context +
         "\n";
}

std::optional<std::string> node_identity::load(const tls_settings& tls,
                                               std::shared_ptr<const node_identity>& out) {
  std::shared_ptr<node_identity> id{new node_identity()};
  auto& m = *id->impl_;
  if (!read_file(tls.certificate, m.certificate))
    return "cannot read the certificate '" + tls.certificate + "' (openssl.certificate)";
  x509_ptr cert;
  chain_ptr rest;
  if (!parse_pem_chain(m.certificate, cert, rest))
    return "'" + tls.certificate + "' (openssl.certificate) is not a PEM certificate: " +
           crypto_error();
  m.name = common_name(cert.get());
  std::string key_pem;
  if (!read_file(tls.key, key_pem))
    return "cannot read the key '" + tls.key + "' (openssl.key)";
  bio_ptr bio{BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()))};
  auto pass = tls.passphrase; // PEM_read_bio_PrivateKey takes a non-const pointer
  m.key.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr,
                                      pass.empty() ? nullptr : pass.data()));
  if (!m.key)
    return "'" + tls.key + "' (openssl.key) is not a PEM private key (or the passphrase is " +
           "wrong): " + crypto_error();
  if (X509_check_private_key(cert.get(), m.key.get()) != 1)
    return "the key '" + tls.key + "' does not belong to the certificate '" + tls.certificate +
           "': " + crypto_error();
  m.store.reset(X509_STORE_new());
  const char* file = tls.cafile.empty() ? nullptr : tls.cafile.c_str();
  const char* dir = tls.capath.empty() ? nullptr : tls.capath.c_str();
  if (!m.store || X509_STORE_load_locations(m.store.get(), file, dir) != 1)
    return "cannot load the cluster CA from '" + (file ? tls.cafile : tls.capath) +
           "' (openssl.cafile / openssl.capath): " + crypto_error();
  out = std::move(id);
  return std::nullopt;
}

std::optional<std::string> node_identity::prove(const std::string& statement,
                                                identity_proof& out) const {
  md_ctx_ptr ctx{EVP_MD_CTX_new()};
  EVP_PKEY* key = impl_->key.get();
  std::size_t len = 0;
  const auto* msg = reinterpret_cast<const unsigned char*>(statement.data());
  if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, digest_for(key), nullptr, key) != 1 ||
      EVP_DigestSign(ctx.get(), nullptr, &len, msg, statement.size()) != 1)
    return "cannot sign the identity challenge: " + crypto_error();
  std::vector<unsigned char> sig(len);
  if (EVP_DigestSign(ctx.get(), sig.data(), &len, msg, statement.size()) != 1)
    return "cannot sign the identity challenge: " + crypto_error();
  out.certificate = impl_->certificate;
  out.signature = hex(sig.data(), len);
  return std::nullopt;
}

std::string node_identity::check(const identity_proof& proof, const std::string& id,
                                  const std::string& statement) const {
  if (proof.certificate.empty() || proof.signature.empty())
    return "it sent no certificate and signature (is it running with deploy.insecure?)";
  if (proof.certificate.size() > max_certificate_pem || proof.signature.size() > max_signature_hex)
    return "its certificate or signature is too long";
  x509_ptr cert;
  chain_ptr rest;
  if (!parse_pem_chain(proof.certificate, cert, rest)) {
    ERR_clear_error();
    return "its certificate is not a PEM certificate";
  }
  store_ctx_ptr vctx{X509_STORE_CTX_new()};
  if (!vctx || X509_STORE_CTX_init(vctx.get(), impl_->store.get(), cert.get(), rest.get()) != 1)
    return "its certificate could not be checked: " + crypto_error();
  X509_STORE_CTX_set_purpose(vctx.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(vctx.get()) != 1) {
    const int e = X509_STORE_CTX_get_error(vctx.get());
    ERR_clear_error();
    return "its certificate does not verify against the cluster CA (" +
           std::string(X509_verify_cert_error_string(e)) + ")";
  }
  const auto cn = common_name(cert.get());
  if (cn != id)
    return cn.empty() ? "its certificate has no single CN" : "its certificate is for '" + cn + "'";
  std::vector<unsigned char> sig;
  if (!unhex(proof.signature, sig))
    return "its signature is not hex";
  EVP_PKEY* key = X509_get0_pubkey(cert.get());
  md_ctx_ptr ctx{EVP_MD_CTX_new()};
  const auto* msg = reinterpret_cast<const unsigned char*>(statement.data());
  const bool good =
    key && ctx && EVP_DigestVerifyInit(ctx.get(), nullptr, digest_for(key), nullptr, key) == 1 &&
    EVP_DigestVerify(ctx.get(), sig.data(), sig.size(), msg, statement.size()) == 1;
  ERR_clear_error();
  if (!good)
    return "its signature does not verify (not made for this challenge: replayed, tampered "
           "or made with another key)";
  return {};
}

} // namespace runtime
