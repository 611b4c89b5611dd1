// Host side shared by the applications' CUDA programs and the AMD launch
// generator (plain C++17, no CUDA): the seeded input generator, command-line
// options, exact comparison of results and the output checksum.
#pragma once
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Deterministic generator (xorshift64*): the same seed gives the same inputs
// on every machine.
struct AppRng {
  uint64_t s;
  explicit AppRng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull) {
    if (s == 0) s = 1;
  }
  uint64_t next() {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 2685821657736338717ull;
  }
  // Uniform in [lo, hi) with 24 random bits.
  float uniform(float lo, float hi) {
    return lo + (hi - lo) * (float)((next() >> 40) * (1.0 / 16777216.0));
  }
  uint8_t byte() { return (uint8_t)(next() >> 56); }
};

// Options `--name value` (unsigned integers). Every get() names an option;
// done() then rejects unknown options and bad values with the full usage.
struct AppArgs {
  int argc;
  char **argv;
  const char *app;
  std::vector<std::string> known;
  std::string error;
  AppArgs(const char *app_name, int c, char **v) : argc(c), argv(v), app(app_name) {}
  // The value of `--name`, or `def` when absent.
  uint64_t get(const char *name, uint64_t def) {
    known.push_back(name);
    for (int i = 1; i < argc; i++) {
      if (strcmp(argv[i], name) != 0) continue;
      char *end = nullptr;
      if (i + 1 < argc && *argv[i + 1] && (strtoull(argv[i + 1], &end, 0), !*end))
        return strtoull(argv[i + 1], nullptr, 0);
      if (error.empty()) error = std::string(name) + " needs an unsigned integer";
      return def;
    }
    return def;
  }
  void done() {
    for (int i = 1; i < argc && error.empty(); i += 2) {
      bool ok = false;
      for (auto &k : known) ok = ok || k == argv[i];
      if (!ok) error = std::string("unknown option ") + argv[i];
    }
    if (!error.empty()) usage(error);
  }
  [[noreturn]] void usage(const std::string &why) {
    std::string opts;
    for (auto &k : known) opts += " [" + k + " N]";
    fprintf(stderr, "error: %s: %s\nusage: %s%s\n", app, why.c_str(), app, opts.c_str());
    exit(2);
  }
};

// FNV-1a over the bytes of a result: equal outputs print equal checksums.
inline uint64_t app_checksum(const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

// Index of the first element whose bytes differ, or -1 when all are equal.
template <typename T> long long app_first_difference(const std::vector<T> &got, const std::vector<T> &want) {
  if (got.size() != want.size()) return 0;
  for (size_t i = 0; i < got.size(); i++)
    if (memcmp(&got[i], &want[i], sizeof(T)) != 0) return (long long)i;
  return -1;
}

// Prints the verdict line and returns the exit status (0 pass, 1 fail; a
// fault-injection campaign sets APP_FAIL_STATUS=0 so that a wrong result
// completes like a right one and is told apart by its line: an SDC).
inline int app_verdict(const char *app, bool pass, const std::string &what, uint64_t checksum) {
  printf("%s %s: %s; checksum %016llx\n", pass ? "PASS" : "FAIL", app, what.c_str(),
         (unsigned long long)checksum);
  const char *fail = getenv("APP_FAIL_STATUS");
  return pass ? 0 : (fail && *fail ? atoi(fail) : 1);
}

inline std::string app_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline std::string app_fmt(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}
