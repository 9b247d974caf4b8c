#pragma once
// Checks shared by the tests of core's sequence edits: the demo sequence, and the
// edit → undo → redo rhythm every reversible edit must keep.

#include <QTest>

#include <functional>
#include <string>
#include <vector>

#include "sequence/edits.h"
#include "sequence/sequence_io.h"
#include "test_support.h"

namespace shotchain::testing {

inline Sequence demoSequence() {
  LoadResult result = loadSequenceFile(workflow("demo.json"));
  if (!result.ok()) qFatal("demo.json does not load: %s", formatAll(result.diagnostics).c_str());
  return *result.sequence;
}

inline std::vector<std::string> shotIds(const Sequence& s) {
  std::vector<std::string> out;
  for (const Shot& shot : s.shots) out.push_back(shot.id);
  return out;
}

// edit -> check -> undo -> check -> redo -> check, for any edit.
inline void rhythm(Sequence& s, const Edit& edit, const std::function<void(const Sequence&)>& checkAfter) {
  const Sequence before = s;
  EditResult done = applyEdit(s, edit);
  QVERIFY2(done.ok(), formatAll(done.errors).c_str());
  checkAfter(s);
  const Sequence after = s;

  EditResult undone = applyEdit(s, *done.inverse);
  QVERIFY2(undone.ok(), formatAll(undone.errors).c_str());
  QVERIFY(s == before);

  EditResult redone = applyEdit(s, *undone.inverse);
  QVERIFY2(redone.ok(), formatAll(redone.errors).c_str());
  QVERIFY(s == after);
  checkAfter(s);
}

// The edit is refused with its first error at `path`, and the sequence is unchanged.
inline void refused(Sequence& s, const Edit& edit, const QString& path) {
  const Sequence before = s;
  EditResult result = applyEdit(s, edit);
  QVERIFY(!result.ok());
  QVERIFY(!result.errors.empty());
  QCOMPARE(q(result.errors.front().path), path);
  QVERIFY2(s == before, "a refused edit changed the document");
}

}  // namespace shotchain::testing
