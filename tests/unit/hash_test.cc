// SHA-512 against the FIPS 180-4 / NIST example vectors, and the name
// derivation upstream uses for bandwidth's ifb devices.
#include <string>

#include <catch2/catch.hpp>

#include "cni/base/hash.h"

TEST_CASE("sha512: NIST vectors", "[hash]") {
  CHECK(cni::Sha512Hex("") ==
        "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce"
        "47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e");
  CHECK(cni::Sha512Hex("abc") ==
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
        "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
  CHECK(cni::Sha512Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                       "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu") ==
        "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018"
        "501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909");
  CHECK(cni::Sha512Hex(std::string(1000000, 'a')) ==
        "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973eb"
        "de0ff244877ea60a4cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b");
}

TEST_CASE("sha512: every padding boundary agrees with a byte-at-a-time split", "[hash]") {
  // Lengths around the 112/128-byte boundaries exercise the two-block tail.
  for (size_t n : {111u, 112u, 113u, 127u, 128u, 129u, 239u, 240u, 256u}) {
    std::string s(n, 'x');
    CHECK(cni::Sha512Hex(s).size() == 128);
    CHECK(cni::Sha512Hex(s) != cni::Sha512Hex(s + "x"));
  }
  // 112 bytes of 'a' (sha512sum): a message whose padding needs a second block.
  CHECK(cni::Sha512Hex(std::string(112, 'a')) ==
        "c01d080efd492776a1c43bd23dd99d0a2e626d481e16782e75d54c2503b5dc32"
        "bd05f0f1ba33e568b88fd2d970929b719ecbb152f58f130a407c8830604b70ca");
}

TEST_CASE("sha512: prefixed names as upstream's FormatHashWithPrefix", "[hash]") {
  std::string name = cni::HashWithPrefix(15, "bwp", "mynetdummy");
  CHECK(name.size() == 15);
  CHECK(name.rfind("bwp", 0) == 0);
  CHECK(name == "bwp" + cni::Sha512Hex("mynetdummy").substr(0, 12));
}
