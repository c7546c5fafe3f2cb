// Node identities (deploy/node_identity.hpp) with real certificates made by
// scripts/make-certs.sh (tests/deploy/test_certs.hpp).
#include <doctest/doctest.h>

#include <string>

#include "deploy/node_identity.hpp"
#include "tests/deploy/test_certs.hpp"

namespace {

using runtime::identity_proof;
using test::certs;
using runtime::identity_statement;
using runtime::node_identity;

// What a node proves at hello: its id, the coordinator's nonce and run id.
identity_proof hello_proof(const node_identity& signer, const std::string& claimed,
                           const std::string& nonce, const std::string& run) {
  identity_proof p;
  auto err = signer.prove(identity_statement("hello", claimed, nonce, run), p);
  REQUIRE_FALSE(err);
  return p;
}

} // namespace

TEST_CASE("node identity: a node's signature of the challenge is accepted") {
  auto coord = certs().load("coord");
  auto t0 = certs().load("t0");
  CHECK(t0->name() == "t0");
  const auto nonce = runtime::make_nonce();
  const auto run = runtime::make_nonce();
  CHECK(nonce.size() == 64); // 32 random bytes in hex
  CHECK(nonce != run);
  auto p = hello_proof(*t0, "t0", nonce, run);
  CHECK(coord->check(p, "t0", identity_statement("hello", "t0", nonce, run)) == "");
  // ... and the coordinator's answer to a node's nonce, checked by the node.
  identity_proof c;
  REQUIRE_FALSE(coord->prove(identity_statement("coordinator", "coord", nonce, "t0"), c));
  CHECK(t0->check(c, "coord", identity_statement("coordinator", "coord", nonce, "t0")) == "");
}

TEST_CASE("node identity: a certificate for another node id is refused, naming its CN") {
  auto coord = certs().load("coord");
  auto t0 = certs().load("t0");
  const auto nonce = runtime::make_nonce(), run = runtime::make_nonce();
  // t0's key and certificate, claiming t1: a valid signature, the wrong CN.
  auto p = hello_proof(*t0, "t1", nonce, run);
  CHECK(coord->check(p, "t1", identity_statement("hello", "t1", nonce, run)) ==
        "its certificate is for 't0'");
}

TEST_CASE("node identity: a certificate from another CA is refused") {
  auto coord = certs().load("coord");
  auto stranger = certs().load("t0", "other"); // CN t0, signed by the other CA
  const auto nonce = runtime::make_nonce(), run = runtime::make_nonce();
  auto p = hello_proof(*stranger, "t0", nonce, run);
  const auto why = coord->check(p, "t0", identity_statement("hello", "t0", nonce, run));
  INFO(why);
  CHECK(why.find("does not verify against the cluster CA") != std::string::npos);
}

TEST_CASE("node identity: a tampered nonce, a replayed signature and a wrong key are refused") {
  auto coord = certs().load("coord");
  auto t0 = certs().load("t0");
  auto t1 = certs().load("t1");
  const auto nonce = runtime::make_nonce(), run = runtime::make_nonce();
  auto p = hello_proof(*t0, "t0", nonce, run);
  auto refused = [&](const identity_proof& q, const std::string& statement) {
    const auto why = coord->check(q, "t0", statement);
    INFO(why);
    CHECK(why.find("signature does not verify") != std::string::npos);
  };
  // The nonce with its last digit changed.
  auto tampered = nonce;
  tampered.back() = tampered.back() == '0' ? '1' : '0';
  refused(p, identity_statement("hello", "t0", tampered, run));
  // The same signature replayed to the next challenge, or to another run.
  refused(p, identity_statement("hello", "t0", runtime::make_nonce(), run));
  refused(p, identity_statement("hello", "t0", nonce, runtime::make_nonce()));
  // A hello signature does not pass as a coordinator's answer.
  refused(p, identity_statement("coordinator", "t0", nonce, run));
  // t0's certificate with a signature made by t1's key.
  auto other_key = hello_proof(*t1, "t0", nonce, run);
  other_key.certificate = p.certificate;
  refused(other_key, identity_statement("hello", "t0", nonce, run));
  // A flipped signature digit.
  auto flipped = p;
  flipped.signature[10] = flipped.signature[10] == 'a' ? 'b' : 'a';
  refused(flipped, identity_statement("hello", "t0", nonce, run));
  // No proof at all, and garbage.
  CHECK(coord->check(identity_proof{}, "t0", "x").find("no certificate") != std::string::npos);
  CHECK(coord->check(identity_proof{"junk", "00"}, "t0", "x").find("not a PEM") !=
        std::string::npos);
}

TEST_CASE("node identity: a key that does not belong to the certificate is refused at load") {
  auto t = certs().tls("t0");
  t.key = certs().tls("t1").key;
  std::shared_ptr<const node_identity> out;
  auto err = node_identity::load(t, out);
  REQUIRE(err);
  CHECK(err->find("does not belong to the certificate") != std::string::npos);
  t.key = (certs().root / "certs" / "missing.key").string();
  err = node_identity::load(t, out);
  REQUIRE(err);
  CHECK(err->find("cannot read the key") != std::string::npos);
}
