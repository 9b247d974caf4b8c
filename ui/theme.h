#pragma once

class QApplication;

namespace shotchain::ui {

// A dark Fusion palette: neutral greys that do not tint the footage being judged.
void applyDarkTheme(QApplication& app);

}  // namespace shotchain::ui
