#pragma once

class QWidget;

namespace shotchain::ui {

// Combo boxes and spin boxes under `root` take the mouse wheel only once they have the keyboard focus (a
// click or Tab gives it): a wheel over an unfocused one scrolls what it sits in instead of changing the
// value, as in Kdenlive and Resolve. Call after the widgets exist.
void guardWheel(QWidget* root);

}  // namespace shotchain::ui
