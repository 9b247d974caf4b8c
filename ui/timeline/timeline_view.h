#pragma once

#include <QHash>
#include <QImage>
#include <QRect>
#include <QString>
#include <QWidget>

#include <utility>
#include <vector>

namespace shotchain::ui {

class RenderState;
class SequenceDocument;

// The magnetic single track: one block per shot, width ∝ frames. Reorder by dragging a block,
// trim by dragging its right edge (both show a ghost and change the document once, on release),
// drop an image on a block for its fallback image, Ctrl+wheel zooms around the pointer, the
// ruler moves the playhead. Every change is one undo step on the document's stack.
class TimelineView : public QWidget {
  Q_OBJECT

 public:
  static constexpr int kRulerHeight = 22;
  static constexpr int kTrackTop = 30;
  static constexpr int kTrackHeight = 100;
  static constexpr int kMargin = 12;
  static constexpr int kEdgeGrip = 6;

  TimelineView(SequenceDocument* document, RenderState* state, QWidget* parent = nullptr);

  int selectedIndex() const { return selected_; }
  void setSelectedIndex(int index);
  int playhead() const { return playhead_; }
  void setPlayhead(int frame);
  // The viewer's I/O loop range (sequence frames, −1 where unset), drawn on the ruler.
  void setLoopRange(int in, int out);
  // View › Advanced Figures: a cut's tooltip lists every figure.
  void setAdvanced(bool advanced) { advanced_ = advanced; }
  std::pair<int, int> loopRange() const { return {loopIn_, loopOut_}; }

  double pixelsPerFrame() const { return pixelsPerFrame_; }
  // Zooms keeping the frame under `anchorX` (widget coordinates) where it is.
  void setPixelsPerFrame(double ppf, int anchorX);
  void zoomToFit();
  int scrollX() const { return scrollX_; }
  void setScrollX(int x);
  int contentWidth() const;

  // Block of shot `index` in widget coordinates (for tests and tooltips).
  QRect blockRect(int index) const;
  int indexAt(const QPoint& pos) const;

  // Edits, each one undo step; false (with statusMessage) when core refused.
  bool nudgeLength(int index, int deltaFrames);
  bool splitShot(int index);
  // A dropped picture (shot_rules' placeDroppedImage): the start image of a fresh shot, the fallback of a continuing one.
  bool placeImage(int index, const QString& imagePath);
  // A picture dropped on the last quarter of a shot: its end keyframe (shot_rules' keyframeEdit: a keyframe shared
  // with the next shot's start changes both).
  bool placeEndImage(int index, const QString& imagePath);
  // The part of a shot's block where a dropped picture becomes its end keyframe.
  QRect endKeyframeZone(int index) const;
  // Takes shot `index`'s start or end keyframe away (a shared one from both shots), one undo step; the block's
  // context menu offers it.
  bool clearKeyframe(int index, bool end);
  // The one slot a keyframe shared at the cut into shot `toIndex` is drawn in, over the cut, while neither shot
  // shows rendered frames; empty otherwise (also while its picture is still being read).
  QRect sharedKeyframeSlot(int toIndex);

  QSize sizeHint() const override { return {800, kTrackTop + kTrackHeight + 12}; }
  QSize minimumSizeHint() const override { return {200, kTrackTop + kTrackHeight + 12}; }

 Q_SIGNALS:
  void selectionChanged(int index);
  void playheadMoved(int frame);
  void viewChanged();
  void statusMessage(const QString& message);
  // A click on a cut's marker or badge: the cut into shot `toIndex` (the playhead moves to its first frame).
  void cutActivated(int toIndex);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dragMoveEvent(QDragMoveEvent* event) override;
  void dragLeaveEvent(QDragLeaveEvent* event) override;
  void dropEvent(QDropEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  struct Span {
    int start = 0;
    int frames = 0;
  };
  enum class Gesture { None, Pending, Reorder, Trim, Scrub };

  std::vector<Span> spans() const;  // with the trim ghost applied (ripple)
  double xOfFrame(double frame) const;
  double frameAtX(double x) const;
  int reorderTarget(int pointerX) const;
  int cutAt(const QPoint& pos) const;
  int edgeAt(const QPoint& pos) const;
  QString cutTooltip(int toIndex) const;
  void paintRuler(QPainter& p);
  void paintLoopRange(QPainter& p);
  void paintBlock(QPainter& p, int index, const QRectF& rect, bool ghost);
  // The start image's thumbnail for a shot not rendered yet: decoded on the thread pool on first use
  // (a null image until it arrives, then a repaint).
  QImage startPicture(const std::string& path);
  void paintCut(QPainter& p, int toIndex, double x);
  // Whether shot `index`'s block shows its rendered first and last frames (else its keyframes).
  bool showsRenderedFrames(int index) const;
  void clampScroll();
  void documentChanged();

  SequenceDocument* document_;
  RenderState* state_;
  QHash<QString, QImage> pictures_;  // by absolute path; a null image: being decoded or unreadable
  int selected_ = -1;
  bool advanced_ = false;
  int playhead_ = 0;
  int loopIn_ = -1, loopOut_ = -1;
  double pixelsPerFrame_ = 6;
  int scrollX_ = 0;
  bool fitOnNextResize_ = true;

  Gesture gesture_ = Gesture::None;
  int gestureIndex_ = -1;
  QPoint pressPos_;
  int pointerX_ = 0;
  int ghostFrames_ = 0;
  int dropHover_ = -1;
};

}  // namespace shotchain::ui
