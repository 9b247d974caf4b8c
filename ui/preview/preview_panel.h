#pragma once

#include <QImage>
#include <QWidget>

class QComboBox;
class QLabel;
class QTimer;
class QToolButton;

namespace shotchain::ui {

class FrameView;
class RenderState;
class SequenceDocument;

// The centre of the studio: plays decoded frames at the sequence's fps (the whole sequence or the
// selected shot), follows the playhead, and during a render shows what the renderer sends, latest
// first: each step's latent preview, then the decoded frames.
class PreviewPanel : public QWidget {
  Q_OBJECT

 public:
  PreviewPanel(SequenceDocument* document, RenderState* state, QWidget* parent = nullptr);

  FrameView* view() const { return view_; }
  bool isPlaying() const;
  void setSelectedShot(int index) { selected_ = index; }

 public Q_SLOTS:
  void showFrameAt(int sequenceFrame);
  void showLive(const QImage& image, const QString& caption);
  void setLive(bool live);
  void togglePlay();
  void stepFrame(int delta);

 Q_SIGNALS:
  // Playback and frame steps move the playhead; the timeline owns it.
  void playheadRequested(int frame);

 private:
  void advance();

  SequenceDocument* document_;
  RenderState* state_;
  FrameView* view_;
  QToolButton* play_;
  QComboBox* scope_;
  QLabel* position_;
  QTimer* timer_;
  int frame_ = 0;
  int selected_ = -1;
  bool live_ = false;
};

}  // namespace shotchain::ui
