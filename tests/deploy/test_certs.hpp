#pragma once
// Real certificates for identity tests, made once per test binary by
// scripts/make-certs.sh into a temporary folder: the cluster CA with coord,
// t0 and t1 (certs/), and a second CA ("other") that also issued a t0.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "deploy/node_identity.hpp"

namespace test {

struct cert_dir {
  std::filesystem::path root;
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
      std::filesystem::remove_all(root, ec);
  }
  // The TLS settings of `node` from folder `ca` ("certs" or "other"), with
  // the cluster CA (certs/ca.pem) either way.
  runtime::tls_settings tls(const std::string& node, const std::string& ca = "certs") const {
    runtime::tls_settings t;
    t.certificate = (root / ca / (node + ".pem")).string();
    t.key = (root / ca / (node + ".key")).string();
    t.cafile = (root / "certs" / "ca.pem").string();
    return t;
  }
  std::shared_ptr<const runtime::node_identity> load(const std::string& node,
                                                     const std::string& ca = "certs") const {
    std::shared_ptr<const runtime::node_identity> out;
    auto err = runtime::node_identity::load(tls(node, ca), out);
    INFO(err.value_or(""));
    REQUIRE_FALSE(err);
    return out;
  }
};

// The suite's one set of certificates.
inline const cert_dir& certs() {
  static cert_dir d;
  REQUIRE(d.made);
  return d;
}

} // namespace test
