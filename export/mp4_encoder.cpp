#include "export/mp4_encoder.h"
#include "export/image_messages.h"

#include <QImage>
#include <QImageReader>
#include <QSize>
#include <QString>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "export/temporary_output_file.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/mathematics.h>
#include <libswscale/swscale.h>
}

#include "export/libav_handles.h"

namespace shotchain::exporting {
namespace {

namespace fs = std::filesystem;

struct ScalerDeleter {
  void operator()(SwsContext* scaler) const { sws_freeContext(scaler); }
};
struct OutputDeleter {
  void operator()(AVFormatContext* format) const {
    if (format->pb) avio_closep(&format->pb);
    avformat_free_context(format);
  }
};

class Failure {
 public:
  explicit Failure(const fs::path& out) : out_(out) {}
  [[noreturn]] void operator()(const std::string& what) const {
    throw std::runtime_error(out_.string() + ": cannot encode the video: " + what);
  }

 private:
  const fs::path& out_;
};

QString qPath(const fs::path& path) { return QString::fromStdString(path.string()); }

int roundUpToEven(int value) { return value + (value & 1); }

// The size every frame is placed on: the largest width and height, rounded up to even.
QSize canvasSize(const std::vector<fs::path>& frames, std::vector<std::string>& warnings) {
  QSize largest;
  bool mixed = false;
  for (const auto& path : frames) {
    const ImageMessages decoder;
    QImageReader reader(qPath(path));
    const QSize size = reader.size();
    if (!size.isValid())
      throw std::runtime_error(path.string() + ": cannot read image: " + reader.errorString().toStdString());
    if (largest.isValid() && size != largest) mixed = true;
    largest = largest.isValid() ? largest.expandedTo(size) : size;
  }
  const QSize canvas(roundUpToEven(largest.width()), roundUpToEven(largest.height()));
  if (mixed)
    warnings.push_back("the frames differ in size; smaller ones are centred on black in the " +
                       std::to_string(canvas.width()) + "x" + std::to_string(canvas.height()) + " video");
  return canvas;
}

// `image` as RGB888 on a canvas-sized image: centred on black, a one-pixel odd-size pad filled
// with the neighbouring edge pixels.
QImage placeOnCanvas(const QImage& image, const QSize& canvas) {
  QImage rgb = image.convertToFormat(QImage::Format_RGB888);
  if (rgb.size() == canvas) return rgb;
  QImage placed(canvas, QImage::Format_RGB888);
  placed.fill(Qt::black);
  const int left = (canvas.width() - rgb.width()) / 2;
  const int top = (canvas.height() - rgb.height()) / 2;
  const auto rowBytes = static_cast<std::size_t>(rgb.width()) * 3;
  for (int y = 0; y < rgb.height(); ++y)
    std::memcpy(placed.scanLine(top + y) + left * 3, rgb.constScanLine(y), rowBytes);
  if (left == 0 && rgb.width() == canvas.width() - 1)
    for (int y = top; y < top + rgb.height(); ++y) {
      uchar* row = placed.scanLine(y);
      std::memcpy(row + rgb.width() * 3, row + (rgb.width() - 1) * 3, 3);
    }
  if (top == 0 && rgb.height() == canvas.height() - 1)
    std::memcpy(placed.scanLine(rgb.height()), placed.constScanLine(rgb.height() - 1),
                static_cast<std::size_t>(canvas.width()) * 3);
  return placed;
}

struct OpenEncoder {
  CodecContext context;
  std::string name;
};

CodecContext configuredContext(const AVCodec* codec, const QSize& canvas, AVRational rate, bool globalHeader) {
  CodecContext context(avcodec_alloc_context3(codec));
  if (!context) return context;
  context->width = canvas.width();
  context->height = canvas.height();
  context->pix_fmt = AV_PIX_FMT_YUV420P;
  context->time_base = av_inv_q(rate);
  context->framerate = rate;
  context->gop_size = std::max(1, static_cast<int>(av_q2d(rate) * 2));
  context->color_range = AVCOL_RANGE_MPEG;
  context->colorspace = AVCOL_SPC_BT709;
  context->color_primaries = AVCOL_PRI_BT709;
  context->color_trc = AVCOL_TRC_BT709;
  context->flags |= AV_CODEC_FLAG_BITEXACT;
  if (globalHeader) context->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  return context;
}

// x264's own CPU detection, except on AVX-512 machines: there its AVX-512 code made two encodes of
// the same frames in one process differ (from the third encode on; seen on a Xeon with libx264
// 0.164.3095). Those CPUs have every extension named here, so the list only drops AVX-512.
std::string x264CpuFlags() {
#if defined(__x86_64__) || defined(__i386__)
  if (__builtin_cpu_supports("avx512f")) return "MMX2,SSE,SSE2,SSE3,SSSE3,SSE4.1,SSE4.2,AVX,AVX2,FMA3,BMI1,BMI2,LZCNT";
#endif
  return "auto";
}

// libx264, else another H.264 encoder this libavcodec has, else MPEG-4 part 2.
OpenEncoder openEncoder(const QSize& canvas, AVRational rate, bool globalHeader, std::vector<std::string>& warnings,
                        const Failure& fail) {
  std::vector<const AVCodec*> candidates;
  if (const AVCodec* x264 = avcodec_find_encoder_by_name("libx264")) candidates.push_back(x264);
  if (const AVCodec* h264 = avcodec_find_encoder(AV_CODEC_ID_H264);
      h264 && std::find(candidates.begin(), candidates.end(), h264) == candidates.end())
    candidates.push_back(h264);
  if (const AVCodec* mpeg4 = avcodec_find_encoder(AV_CODEC_ID_MPEG4)) candidates.push_back(mpeg4);

  std::string tried;
  for (const AVCodec* codec : candidates) {
    CodecContext context = configuredContext(codec, canvas, rate, globalHeader);
    if (!context) fail("out of memory");
    AVDictionary* options = nullptr;
    const std::string name = codec->name;
    if (name == "libx264") {
      av_dict_set(&options, "preset", "medium", 0);
      av_dict_set(&options, "crf", "18", 0);
      av_dict_set(&options, "x264-params", ("asm=" + x264CpuFlags()).c_str(), 0);
    } else if (codec->id == AV_CODEC_ID_MPEG4) {
      context->flags |= AV_CODEC_FLAG_QSCALE;
      context->global_quality = FF_QP2LAMBDA * 3;
    }
    const int status = avcodec_open2(context.get(), codec, &options);
    av_dict_free(&options);
    if (status >= 0) {
      if (name != "libx264")
        warnings.push_back("libx264 is not available; the video is encoded with " + name +
                           (codec->id == AV_CODEC_ID_H264 ? "" : " (MPEG-4 part 2, not H.264)") +
                           " instead: install libavcodec with x264 support for H.264");
      return {std::move(context), name};
    }
    tried += (tried.empty() ? "" : ", ") + name + " (" + avError(status) + ")";
  }
  fail(tried.empty() ? "this libavcodec has no H.264 or MPEG-4 encoder" : "no encoder could be opened: " + tried);
}

// Keeps x264's per-run statistics off the terminal unless the application chose a log level.
void quietLibavLogging() {
  if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_ERROR);
}

}  // namespace

Mp4Encoding encodeSequenceMp4(const std::vector<fs::path>& pngFrames, double fps, const fs::path& out) {
  const Failure fail(out);
  if (pngFrames.empty()) fail("there are no frames");
  if (!(fps > 0) || fps > 1000) fail("the frame rate " + std::to_string(fps) + " is not between 0 and 1000");
  quietLibavLogging();

  Mp4Encoding result;
  const QSize canvas = canvasSize(pngFrames, result.warnings);
  const AVRational rate = av_d2q(fps, 1 << 16);

  TemporaryOutputFile temporary(out);  // outlives the muxer below, which closes the file first
  AVFormatContext* rawFormat = nullptr;
  int status = avformat_alloc_output_context2(&rawFormat, nullptr, "mp4", temporary.path().c_str());
  if (status < 0 || !rawFormat) fail("cannot set up the MP4 muxer: " + avError(status));
  std::unique_ptr<AVFormatContext, OutputDeleter> format(rawFormat);
  format->flags |= AVFMT_FLAG_BITEXACT;

  OpenEncoder encoder =
      openEncoder(canvas, rate, (format->oformat->flags & AVFMT_GLOBALHEADER) != 0, result.warnings, fail);
  AVCodecContext* context = encoder.context.get();
  result.encoder = encoder.name;

  AVStream* stream = avformat_new_stream(format.get(), nullptr);
  if (!stream) fail("cannot add a video stream");
  status = avcodec_parameters_from_context(stream->codecpar, context);
  if (status < 0) fail("cannot copy the encoder parameters: " + avError(status));
  stream->time_base = context->time_base;
  stream->avg_frame_rate = rate;

  status = avio_open(&format->pb, temporary.path().c_str(), AVIO_FLAG_WRITE);
  if (status < 0) fail("cannot open " + temporary.path().string() + ": " + avError(status));
  AVDictionary* muxerOptions = nullptr;
  av_dict_set(&muxerOptions, "movflags", "+faststart", 0);
  status = avformat_write_header(format.get(), &muxerOptions);
  av_dict_free(&muxerOptions);
  if (status < 0) fail("cannot write the MP4 header: " + avError(status));

  Frame frame(av_frame_alloc());
  Packet packet(av_packet_alloc());
  if (!frame || !packet) fail("out of memory");
  frame->format = AV_PIX_FMT_YUV420P;
  frame->width = canvas.width();
  frame->height = canvas.height();
  frame->color_range = AVCOL_RANGE_MPEG;
  frame->colorspace = AVCOL_SPC_BT709;
  status = av_frame_get_buffer(frame.get(), 0);
  if (status < 0) fail("cannot allocate a frame: " + avError(status));

  std::unique_ptr<SwsContext, ScalerDeleter> toYuv(
      sws_getContext(canvas.width(), canvas.height(), AV_PIX_FMT_RGB24, canvas.width(), canvas.height(),
                     AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND, nullptr, nullptr, nullptr));
  if (!toYuv) fail("cannot set up the RGB to YUV conversion");
  sws_setColorspaceDetails(toYuv.get(), sws_getCoefficients(SWS_CS_DEFAULT), 1, sws_getCoefficients(SWS_CS_ITU709), 0,
                           0, 1 << 16, 1 << 16);

  auto sendAndWrite = [&](const AVFrame* input) {
    int sent = avcodec_send_frame(context, input);
    if (sent < 0) fail(encoder.name + " refused a frame: " + avError(sent));
    for (;;) {
      const int received = avcodec_receive_packet(context, packet.get());
      if (received == AVERROR(EAGAIN) || received == AVERROR_EOF) return;
      if (received < 0) fail(encoder.name + " failed: " + avError(received));
      av_packet_rescale_ts(packet.get(), context->time_base, stream->time_base);
      packet->stream_index = stream->index;
      const int written = av_interleaved_write_frame(format.get(), packet.get());
      if (written < 0) fail("cannot write to " + temporary.path().string() + ": " + avError(written));
    }
  };

  for (std::size_t i = 0; i < pngFrames.size(); ++i) {
    const ImageMessages decoder;
    QImageReader reader(qPath(pngFrames[i]));
    const QImage image = reader.read();
    if (image.isNull())
      throw std::runtime_error(pngFrames[i].string() + ": cannot read image: " + reader.errorString().toStdString() +
                               (decoder.text().empty() ? "" : " (" + decoder.text() + ")"));
    const QImage rgb = placeOnCanvas(image, canvas);
    status = av_frame_make_writable(frame.get());
    if (status < 0) fail("cannot reuse the frame buffer: " + avError(status));
    const uint8_t* const planes[1] = {rgb.constBits()};
    const int strides[1] = {static_cast<int>(rgb.bytesPerLine())};
    sws_scale(toYuv.get(), planes, strides, 0, canvas.height(), frame->data, frame->linesize);
    frame->pts = static_cast<int64_t>(i);
    sendAndWrite(frame.get());
  }
  sendAndWrite(nullptr);

  status = av_write_trailer(format.get());
  if (status < 0) fail("cannot finish the MP4: " + avError(status));
  status = avio_closep(&format->pb);
  if (status < 0) fail("cannot close " + temporary.path().string() + ": " + avError(status));
  format.reset();
  temporary.commit();

  result.width = canvas.width();
  result.height = canvas.height();
  result.frames = static_cast<int>(pngFrames.size());
  return result;
}

}  // namespace shotchain::exporting
