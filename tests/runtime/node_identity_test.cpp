// Node identities (runtime/node_identity.hpp) with real certificates made by
// scripts/make-certs.sh into a temporary folder: the cluster CA with coord,
// t0 and t1, and a second CA ("other") that also issued a t0.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/node_identity.hpp"

namespace {

namespace fs = std::filesystem;
using runtime::identity_proof;
using runtime::identity_statement;
using runtime::node_identity;

struct cert_dir {
  fs::path root;
  bool made = false;
  cert_dir() {
    char tmpl[] = "/tmp/ss-identity-XXXXXX";
    if (!mkdtemp(tmpl))
      return;
    root = tmpl;
    const std::string script = std::string(SS_SOURCE_DIR) + "/scripts/make-certs.sh";
    const std::string cluster =
      "bash '" + script + "' '" + (root / "certs").string() + "' coord t0 t1 > /dev/null";
    const std::string other = "bash '" + script + "' --ca-name other '" +
                              (root / "other").string() + "' t0 > /dev/null";
    made = std::system(cluster.c_str()) == 0 && std::system(other.c_str()) == 0;
  }
  ~cert_dir() {
    std::error_code ec;
    if (!root.empty())
      fs::remove_all(root, ec);
  }
  // The identity of `node` from folder `ca` ("certs" or "other"), checking
  // peers against the cluster CA (certs/ca.pem) either way.
  std::shared_ptr<const node_identity> load(const std::string& node,
                                            const std::string& ca = "certs") const {
    runtime::tls_settings t;
    t.certificate = (root / ca / (node + ".pem")).string();
    t.key = (root / ca / (node + ".key")).string();
    t.cafile = (root / "certs" / "ca.pem").string();
    std::shared_ptr<const node_identity> out;
    auto err = node_identity::load(t, out);
    INFO(err.value_or(""));
    REQUIRE_FALSE(err);
    return out;
  }
};

const cert_dir& certs() {
  static cert_dir d; // one set of certificates for the whole suite
  REQUIRE(d.made);
  return d;
}

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
  runtime::tls_settings t;
  t.certificate = (certs().root / "certs" / "t0.pem").string();
  t.key = (certs().root / "certs" / "t1.key").string();
  t.cafile = (certs().root / "certs" / "ca.pem").string();
  std::shared_ptr<const node_identity> out;
  auto err = node_identity::load(t, out);
  REQUIRE(err);
  CHECK(err->find("does not belong to the certificate") != std::string::npos);
  t.key = (certs().root / "certs" / "missing.key").string();
  err = node_identity::load(t, out);
  REQUIRE(err);
  CHECK(err->find("cannot read the key") != std::string::npos);
}
