// A driver for the fuzz targets without libFuzzer (gcc builds, CI): runs every
// seed in the given corpus directories, then a fixed number of deterministic
// mutations of each seed (byte flips, insertions, deletions, truncation and
// splicing with another seed). Under ASan/UBSan this catches crashes, leaks and
// undefined behaviour on malformed input on every CI run; scripts/fuzz runs the
// same targets under real libFuzzer with clang for open-ended exploration.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> LoadSeeds(int argc, char** argv) {
  std::vector<std::string> seeds;
  for (int i = 2; i < argc; ++i) {
    for (const auto& entry : std::filesystem::directory_iterator(argv[i])) {
      std::ifstream f(entry.path(), std::ios::binary);
      seeds.emplace_back(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
    }
  }
  return seeds;
}

std::string Mutate(const std::string& seed, const std::vector<std::string>& all, std::mt19937& rng) {
  std::string s = seed;
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    size_t pos = s.empty() ? 0 : rng() % s.size();
    switch (rng() % 6) {
      case 0: if (!s.empty()) s[pos] = static_cast<char>(s[pos] ^ (1 << (rng() % 8))); break;
      case 1: s.insert(pos, 1, "{}[]\",:0-.\\/\n;= a"[rng() % 18]); break;
      case 2: if (!s.empty()) s.erase(pos, 1 + rng() % 4); break;
      case 3: s.resize(pos); break;
      case 4: {
        const std::string& other = all[rng() % all.size()];
        size_t from = other.empty() ? 0 : rng() % other.size();
        s.insert(pos, other.substr(from, rng() % 32));
        break;
      }
      default: if (!s.empty()) s.insert(pos, s.substr(pos, rng() % 16)); break;
    }
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: " << argv[0] << " <mutations-per-seed> <corpus-dir>...\n";
    return 2;
  }
  int mutations = std::stoi(argv[1]);
  std::vector<std::string> seeds = LoadSeeds(argc, argv);
  if (seeds.empty()) {
    std::cerr << "no seeds\n";
    return 2;
  }
  std::mt19937 rng(20261122);  // fixed: the same inputs on every run
  size_t runs = 0;
  for (const std::string& seed : seeds) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
    ++runs;
    for (int m = 0; m < mutations; ++m) {
      std::string input = Mutate(seed, seeds, rng);
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
      ++runs;
    }
  }
  std::printf("%zu inputs, %zu seeds: no crash\n", runs, seeds.size());
  return 0;
}
