// The tests of one folder are linked into one executable (tests/CMakeLists.txt); each Qt Test class
// registers itself here, and ctest runs one class per process: `tests_core_sequence SequenceEdits`.
#pragma once

#include <QTest>

namespace shotchain::testing {

// The application object a class runs under: none, QCoreApplication, or the GUI one of its executable
// (QApplication where Qt Widgets is linked, else QGuiApplication) — QTEST_APPLESS_MAIN,
// QTEST_GUILESS_MAIN and QTEST_MAIN.
enum class TestApp { Appless, Core, Gui };

struct RegisteredTest {
  const char* name;
  TestApp app;
  void (*initMain)();
  int (*run)(int argc, char** argv);
};

bool registerTest(const RegisteredTest& test);

}  // namespace shotchain::testing

#define SHOTCHAIN_TEST(TestObject, App)                                                                           \
  [[maybe_unused]] static const bool shotchainRegistered##TestObject =                                            \
      ::shotchain::testing::registerTest({#TestObject, ::shotchain::testing::TestApp::App,                        \
                                          &QTest::Internal::callInitMain<TestObject>, [](int argc, char** argv) { \
                                            TestObject tc;                                                        \
                                            QTEST_SET_MAIN_SOURCE_PATH                                            \
                                            return QTest::qExec(&tc, argc, argv);                                 \
                                          }});
