// Checking a result document: against the CNI result JSON schema
// (docs/spec/result.schema.json, built into the tool), and against the rules
// of the spec that a schema cannot say (addresses that parse, an interface
// index inside the list, the version asked for).
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "cni/base/json.h"

namespace conformance {

// The result schema the tool was built with (docs/spec/result.schema.json).
const cni::Json& ResultSchema();

// Validates `doc` against `schema`, a JSON Schema that uses only the keywords
// the result schema uses: type, required, properties, items, $ref (to
// "#/$defs/..."), pattern, minimum, maximum, enum; the annotations ($schema,
// $id, title, description, examples, $defs) are read past. Any other keyword is
// reported as a violation, so a schema that grows a rule this validator does
// not know fails loudly instead of passing everything. Returns one line per
// violation ("/ips/0/address: missing required property"); empty when valid.
std::vector<std::string> ValidateAgainstSchema(const cni::Json& schema, const cni::Json& doc);

// What the result of an ADD is checked against beyond the schema.
struct ResultExpectations {
  std::string version;  // the cniVersion the plugin was asked for
};

// The spec's rules for a success result of `expect.version` (section 5, and
// the 0.1.0/0.2.0 shape with "ip4"/"ip6" for versions before 0.3.0, which the
// schema does not describe): "cniVersion" equal to the version asked for;
// addresses and destinations in CIDR notation, gateways and nameservers IP
// addresses of the address's family; "interface" an index into "interfaces".
// For 0.3.0 and later the schema is applied too. Empty when valid.
std::vector<std::string> ValidateResult(const cni::Json& result, const ResultExpectations& expect);

// Spec section 5: a plugin given prevResult "must output it as their result,
// with any possible modifications". What of `prev` is missing from `result`:
// interfaces (by name and sandbox), IPs (by address, on the same interface),
// routes, and DNS values (lists may grow). Empty when all is carried through.
std::vector<std::string> CarriedThrough(const cni::Json& prev, const cni::Json& result);

}  // namespace conformance
