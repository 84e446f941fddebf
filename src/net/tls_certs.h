// Certificates for Berth's own servers, generated with OpenSSL: a private CA and serving
// certificates it signs (the embedded API server), or a self-signed serving certificate (the
// scheduler's endpoints when none is given).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"

namespace berth::net {

struct PemPair {
  std::string cert_pem;
  std::string key_pem;
};

// Decodes base64 text (whitespace ignored); errors name `what`.
Result<std::string> DecodeBase64(const std::string& text, std::string_view what);

// A self-signed CA certificate (10 years) with a fresh P-256 key.
Result<PemPair> GenerateCa(const std::string& common_name);
// A serving certificate (1 year... renewed on start when near expiry is the caller's choice)
// signed by `ca`, valid for `hosts` (IP addresses and DNS names become SANs).
Result<PemPair> GenerateServingCert(const PemPair& ca, const std::string& common_name,
                                    const std::vector<std::string>& hosts);
// A self-signed serving certificate for `hosts`.
Result<PemPair> GenerateSelfSigned(const std::string& common_name,
                                   const std::vector<std::string>& hosts);

}  // namespace berth::net
