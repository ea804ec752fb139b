// A minimal test harness for the C++ model tests. SystemC elaborates once per process, so each
// binary holds named cases and runs exactly one per invocation:
//   ./test_x --list        prints the case names
//   ./test_x CASE          runs one case; exit code 0 = pass
// tests/test_cpp_models.py builds every tests/cpp/test_*.cpp and runs each case in its own process.
#ifndef TLM_MODELS_TESTS_CHECK_H
#define TLM_MODELS_TESTS_CHECK_H

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include <systemc>

namespace check {

inline std::map<std::string, std::function<void()>>& registry() {
  static std::map<std::string, std::function<void()>> cases;
  return cases;
}

inline int& failures() {
  static int n = 0;
  return n;
}

struct Register {
  Register(const char* name, std::function<void()> fn) { registry()[name] = std::move(fn); }
};

template <typename A, typename B>
void expect_eq(const A& a, const B& b, const char* ea, const char* eb, const char* file, int line) {
  if (!(a == b)) {
    std::ostringstream os;
    os << file << ":" << line << ": expected " << ea << " == " << eb << ", got " << a << " vs " << b;
    std::fprintf(stderr, "%s\n", os.str().c_str());
    ++failures();
  }
}

// Whether `fn` stopped with the time-range error (time_ticks.h: a std::overflow_error naming
// 2^64 ticks) instead of wrapping to an early time.
inline bool stops_past_time_range(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::overflow_error& e) {
    return std::string(e.what()).find("simulated time passed 2^64 ticks") != std::string::npos;
  }
  return false;
}

inline int run(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const auto& kv : registry()) std::printf("%s\n", kv.first.c_str());
    return 0;
  }
  if (argc != 2 || registry().count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: %s --list | CASE\n", argv[0]);
    return 2;
  }
  try {
    registry()[argv[1]]();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "exception: %s\n", e.what());
    return 1;
  }
  return failures() == 0 ? 0 : 1;
}

}  // namespace check

#define CHECK_CAT2(a, b) a##b
#define CHECK_CAT(a, b) CHECK_CAT2(a, b)
#define TEST_CASE(name)                                                       \
  static void CHECK_CAT(test_fn_, name)();                                    \
  static check::Register CHECK_CAT(test_reg_, name)(#name, CHECK_CAT(test_fn_, name)); \
  static void CHECK_CAT(test_fn_, name)()

#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++check::failures();                                                       \
    }                                                                            \
  } while (0)

#define CHECK_EQ(a, b) check::expect_eq((a), (b), #a, #b, __FILE__, __LINE__)

// Every test binary defines sc_main through this.
#define CHECK_MAIN \
  int sc_main(int argc, char** argv) { return check::run(argc, argv); }

#endif  // TLM_MODELS_TESTS_CHECK_H
