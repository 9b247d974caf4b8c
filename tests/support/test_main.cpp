// main() of a folder's test executable: runs the Qt Test class named by the first argument, with the
// rest of the arguments, under the application object the class asked for.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <QCoreApplication>
#if defined(QT_WIDGETS_LIB)
#include <QApplication>
#elif defined(QT_GUI_LIB)
#include <QGuiApplication>
#endif

#include "test_registry.h"

namespace shotchain::testing {
namespace {

std::map<std::string, RegisteredTest>& registry() {
  static std::map<std::string, RegisteredTest> tests;
  return tests;
}

template <typename App>
int runUnder(const RegisteredTest& test, int argc, char** argv) {
  App app(argc, argv);
  app.setAttribute(Qt::AA_Use96Dpi, true);
  return test.run(argc, argv);
}

}  // namespace

bool registerTest(const RegisteredTest& test) { return registry().emplace(test.name, test).second; }

}  // namespace shotchain::testing

int main(int argc, char** argv) {
  using namespace shotchain::testing;
  const auto found = argc > 1 ? registry().find(argv[1]) : registry().end();
  if (found == registry().end()) {
    std::fprintf(stderr, "usage: %s TEST [Qt Test options]; the tests here:\n", argv[0]);
    for (const auto& [name, test] : registry()) std::fprintf(stderr, "  %s\n", name.c_str());
    return 2;
  }
  std::vector<char*> args{argv[0]};
  args.insert(args.end(), argv + 2, argv + argc);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  const RegisteredTest& test = found->second;
  test.initMain();
  switch (test.app) {
    case TestApp::Appless:
      return test.run(count, args.data());
    case TestApp::Core:
      return runUnder<QCoreApplication>(test, count, args.data());
    case TestApp::Gui:
#if defined(QT_WIDGETS_LIB)
      return runUnder<QApplication>(test, count, args.data());
#elif defined(QT_GUI_LIB)
      return runUnder<QGuiApplication>(test, count, args.data());
#else
      return runUnder<QCoreApplication>(test, count, args.data());
#endif
  }
  return 2;
}
