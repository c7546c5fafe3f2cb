#pragma once
// Who is on the other end of a multi-node connection: a node's identity is
// the CN of its certificate, and it proves it by signing a challenge with its
// private key (DESIGN.md section 13).
//
// CAF 0.17's OpenSSL module checks that a peer's certificate chains to the
// cluster CA, but hands the application neither the certificate nor its CN,
// and BASP names a peer by the CAF node id the peer announces itself. So the
// coordinator binds the two at hello:
//
//   node -> coordinator: challenge(claimed id, node nonce)
//        <- node_challenge{coordinator nonce, run, coordinator's proof}
//           (the coordinator signed statement("coordinator", its id, node
//           nonce, claimed id): the node checks it is talking to the
//           spec's coordinator)
//   node -> coordinator: hello(node_hello{..., certificate, signature of
//           statement("hello", claimed id, coordinator nonce, run)})
//
// The coordinator accepts the hello only when the certificate chains to the
// cluster CA, its CN is the claimed id, and the signature verifies with the
// certificate's public key over the statement built from the nonce it issued
// to that sender (single use) and its own run id. Then it records the
// sender's CAF node id as that node's verified identity (node_agent.cpp).
// A signature made for another nonce, another run, another id or another
// purpose does not verify. This file is the only user of libcrypto's
// certificate and signature calls; nothing here knows CAF.
//
// Thread safety: a loaded node_identity is immutable and may be shared.
#include <memory>
#include <optional>
#include <string>

#include "config/deploy_config.hpp"

namespace runtime {

// What a node sends to prove an id: its certificate (PEM; may be followed by
// intermediate CA certificates) and a signature (hex) of a statement.
struct identity_proof {
  std::string certificate;
  std::string signature;
};

// Upper bounds on what a peer may send (bytes of PEM, hex digits).
constexpr std::size_t max_certificate_pem = 64 * 1024;
constexpr std::size_t max_signature_hex = 2048;

// A fresh random nonce: 32 bytes from the OpenSSL CSPRNG, as 64 hex digits
// (empty when the generator fails, which no caller accepts as a nonce).
std::string make_nonce();

// The exact bytes a proof signs. `purpose` keeps a node's hello signature
// from passing as a coordinator's answer and the other way round.
std::string identity_statement(const std::string& purpose, const std::string& id,
                               const std::string& nonce, const std::string& context);

// This node's key and certificate plus the cluster CA, loaded once.
class node_identity {
public:
  // Reads tls.certificate, tls.key (with tls.passphrase) and tls.cafile /
  // tls.capath. An error names the file and what is wrong with it.
  static std::optional<std::string> load(const tls_settings& tls,
                                         std::shared_ptr<const node_identity>& out);

  // Signs `statement` with this node's key; the proof carries this node's
  // certificate. An error only when libcrypto fails.
  std::optional<std::string> prove(const std::string& statement, identity_proof& out) const;

  // Checks a peer's proof for `id`: chain to the cluster CA (X509_verify_cert,
  // TLS client purpose), CN == id, signature of `statement` with the
  // certificate's key (EVP_DigestVerify). Empty when it holds; otherwise the
  // reason, phrased to follow "claims '<id>' but ", e.g. "its certificate is
  // for 't0'".
  std::string check(const identity_proof& proof, const std::string& id,
                    const std::string& statement) const;

  // The CN of this node's own certificate.
  const std::string& name() const;

  struct impl;
  ~node_identity();

private:
  node_identity();
  std::unique_ptr<impl> impl_;
};

} // namespace runtime
