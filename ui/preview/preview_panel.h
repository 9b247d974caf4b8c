#pragma once

#include <QImage>
#include <QVector>
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
// first: each step's latent preview, then the decoded frames. Scrubbing to a finished frame during a
// render shows that frame and holds it until "Follow render" (or a scrub to a frame not rendered yet).
class PreviewPanel : public QWidget {
  Q_OBJECT

 public:
  PreviewPanel(SequenceDocument* document, RenderState* state, QWidget* parent = nullptr);

  FrameView* view() const { return view_; }
  bool isPlaying() const;
  void setSelectedShot(int index) { selected_ = index; }
  // Frames advanced per tick while playing: 1 forward, −1 backward, ±2, ±4, ±8 when shuttling.
  int playbackRate() const { return rate_; }
  // The loop range set with I and O (sequence frames, inclusive); −1 when unset.
  int loopIn() const { return loopIn_; }
  int loopOut() const { return loopOut_; }

 public Q_SLOTS:
  void showFrameAt(int sequenceFrame);
  void showLive(const QImage& image, const QString& caption);
  // A whole shot's frames during a render (the preview decoder's), played in a loop at the sequence's fps until
  // the next live image or frames.
  void showLiveFrames(const QVector<QImage>& frames, const QString& caption);
  void setLive(bool live);
  // During a render: back to what the renderer sends, after a scrub held a finished frame.
  void followRender();
  void togglePlay();
  void stepFrame(int delta);
  // J / L: play backward / forward; pressed again in the same direction, twice as fast (up to 8×).
  void shuttle(int direction);
  // K: stop, and the next J or L starts at 1×.
  void pause();
  void setLoopIn();
  void setLoopOut();
  void clearLoop();

 Q_SIGNALS:
  // Playback and frame steps move the playhead; the timeline owns it.
  void playheadRequested(int frame);
  // The I/O loop range changed (−1 where unset).
  void loopChanged(int in, int out);

 private:
  void advance();

  SequenceDocument* document_;
  RenderState* state_;
  FrameView* view_;
  QToolButton* play_;
  QToolButton* follow_;
  QComboBox* scope_;
  QLabel* position_;
  QTimer* timer_;
  void start();

  int frame_ = 0;
  int selected_ = -1;
  int rate_ = 1;
  int loopIn_ = -1, loopOut_ = -1;
  bool live_ = false;
  bool held_ = false;  // live, but the user scrubbed to a finished frame
  QImage liveImage_;   // the renderer's latest, shown again by followRender()
  QString liveCaption_;
  QVector<QImage> liveFrames_;  // showLiveFrames: played by liveTimer_
  int liveFrame_ = 0;
  QTimer* liveTimer_;
  void showLiveFrame();
};

}  // namespace shotchain::ui
