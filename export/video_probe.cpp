#include "export/video_probe.h"

#include <memory>
#include <stdexcept>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>
}

#include "export/libav_handles.h"

namespace shotchain::exporting {
namespace {

struct InputDeleter {
  void operator()(AVFormatContext* format) const { avformat_close_input(&format); }
};

}  // namespace

VideoProbe probeVideo(const std::filesystem::path& path) {
  auto fail = [&](const std::string& what) -> void { throw std::runtime_error(path.string() + ": " + what); };

  AVFormatContext* rawInput = nullptr;
  int status = avformat_open_input(&rawInput, path.c_str(), nullptr, nullptr);
  if (status < 0) fail("cannot open the video: " + avError(status));
  std::unique_ptr<AVFormatContext, InputDeleter> input(rawInput);
  status = avformat_find_stream_info(input.get(), nullptr);
  if (status < 0) fail("cannot read the stream information: " + avError(status));

  AVStream* stream = nullptr;
  for (unsigned i = 0; i < input->nb_streams && !stream; ++i)
    if (input->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO) stream = input->streams[i];
  if (!stream) fail("holds no video stream");

  VideoProbe probe;
  const AVCodecParameters* parameters = stream->codecpar;
  probe.codec = avcodec_get_name(parameters->codec_id);
  const char* pixelFormat = av_get_pix_fmt_name(static_cast<AVPixelFormat>(parameters->format));
  probe.pixelFormat = pixelFormat ? pixelFormat : "";
  probe.width = parameters->width;
  probe.height = parameters->height;
  probe.fps = av_q2d(stream->avg_frame_rate);
  probe.durationSeconds = stream->duration > 0 ? static_cast<double>(stream->duration) * av_q2d(stream->time_base)
                                               : static_cast<double>(input->duration) / AV_TIME_BASE;

  const AVCodec* decoder = avcodec_find_decoder(parameters->codec_id);
  if (!decoder) fail("no decoder for " + probe.codec);
  CodecContext context(avcodec_alloc_context3(decoder));
  Frame frame(av_frame_alloc());
  Packet packet(av_packet_alloc());
  if (!context || !frame || !packet) fail("out of memory");
  status = avcodec_parameters_to_context(context.get(), parameters);
  if (status >= 0) status = avcodec_open2(context.get(), decoder, nullptr);
  if (status < 0) fail("cannot open the " + probe.codec + " decoder: " + avError(status));

  auto receiveAll = [&] {
    for (;;) {
      const int received = avcodec_receive_frame(context.get(), frame.get());
      if (received == AVERROR(EAGAIN) || received == AVERROR_EOF) return;
      if (received < 0) fail("decoding failed: " + avError(received));
      ++probe.decodedFrames;
      av_frame_unref(frame.get());
    }
  };
  for (;;) {
    status = av_read_frame(input.get(), packet.get());
    if (status == AVERROR_EOF) break;
    if (status < 0) fail("reading failed: " + avError(status));
    if (packet->stream_index == stream->index) {
      ++probe.packets;
      status = avcodec_send_packet(context.get(), packet.get());
      if (status < 0 && status != AVERROR(EAGAIN)) fail("decoding failed: " + avError(status));
      receiveAll();
    }
    av_packet_unref(packet.get());
  }
  avcodec_send_packet(context.get(), nullptr);
  receiveAll();
  return probe;
}

}  // namespace shotchain::exporting
