#!/usr/bin/env python3
"""Golden data for the TAEHV tiny video decoder (tests/golden/README.md §14).

Runs the official `taehv.py` of madebyollin/taehv at the pinned commit below on CPU in float32, one thread, with
two tiny seeded configurations, and writes:

  taehv_tiny_wan21.safetensors     16 latent channels, patch 1 (taew2_1 layout), encoder + decoder state dict
  taehv_tiny_wan21_io.safetensors  latents [2, 3, 16, 4, 6], decode_video output, a 1-frame decode and a
                                   reduced-preview decode (no time upscale, two spatial upscales)
  taehv_tiny_wan22.safetensors     48 latent channels, patch 2 (taew2_2 layout), encoder + decoder state dict
  taehv_tiny_wan22_io.safetensors  latents [1, 3, 48, 3, 4], decode_video output, a 1-frame decode

The official constructor hard-codes the decoder widths (256, 128, 64, 64) and the encoder width 64: real widths
would make a 45 MB float32 file. So the official classes are built with narrower widths: while TAEHV.__init__ runs,
the module's `conv`, `MemBlock`, `TPool` and `TGrow` are replaced by thin subclasses / wrappers that map the
hard-coded widths through the configuration's width map in CONFIGS (and restored afterwards). Every forward is the
official one; the layer list, the key names, the strides, the frame trimming and the maths are untouched.

Usage: make_taehv.py TAEHV_PY OUT_DIR
TAEHV_PY is taehv.py of madebyollin/taehv at COMMIT (its git blob hash is checked), e.g. the output of
`git show COMMIT:taehv.py`, kept outside the repository; nothing of it is copied.
"""
import contextlib
import hashlib
import importlib.util
import json
import math
import struct
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

COMMIT = "1f14a568f24bf8811e0a0ac601613e04fc1581e8"  # repository HEAD; taehv.py last changed in 62f7591f
TAEHV_PY_BLOB = "64c82b980a6f84ba176f2497f45848fdcf9dce19"  # git hash-object of taehv.py at COMMIT
REPO = "madebyollin/taehv"

# name -> (constructor arguments, hard-coded width -> tiny width, weight seed, latent shape NTCHW, latent scale)
CONFIGS = {
    'wan21': (dict(checkpoint_path=None, patch_size=1, latent_channels=16), {256: 24, 128: 16, 64: 8}, 5101,
              (2, 3, 16, 4, 6), 1.0),
    'wan22': (dict(checkpoint_path=None, patch_size=2, latent_channels=48), {256: 20, 128: 12, 64: 10}, 5201,
              (1, 3, 48, 3, 4), 1.5),
}
# The reduced preview of the README ("How can I make TAEHV even faster?"), on the wan21 weights.
PREVIEW = dict(decoder_time_upscale=(False, False), decoder_space_upscale=(True, True, False))
OUTPUT_GAIN = 0.6  # the last conv's weights are OUTPUT_GAIN·N/sqrt(fan_in): most pixels inside (0, 1)


def import_official(path: Path):
    data = path.read_bytes()
    blob = hashlib.sha1(b'blob %d\0' % len(data) + data).hexdigest()
    if blob != TAEHV_PY_BLOB:
        sys.exit(f'{path}: git blob {blob}, not taehv.py at {COMMIT} ({TAEHV_PY_BLOB})')
    spec = importlib.util.spec_from_file_location('taehv', path)
    module = importlib.util.module_from_spec(spec)
    sys.modules['taehv'] = module
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def narrow_widths(taehv, widths):
    """While TAEHV.__init__ runs, the hard-coded widths 256 / 128 / 64 become widths[...]. Only the widths the
    constructor passes are mapped; the blocks' own inner convolutions (n_in * 2 …) follow from the mapped ones."""
    official = {name: getattr(taehv, name) for name in ('conv', 'MemBlock', 'TPool', 'TGrow')}
    inside_block = [0]

    def narrow(n):
        return widths.get(n, n)

    def conv(n_in, n_out, **kwargs):
        if inside_block[0]:
            return official['conv'](n_in, n_out, **kwargs)
        return official['conv'](narrow(n_in), narrow(n_out), **kwargs)

    class MemBlock(official['MemBlock']):

        def __init__(self, n_in, n_out):
            inside_block[0] += 1
            try:
                super().__init__(narrow(n_in), narrow(n_out))
            finally:
                inside_block[0] -= 1

    class TPool(official['TPool']):

        def __init__(self, n_f, stride):
            super().__init__(narrow(n_f), stride)

    class TGrow(official['TGrow']):

        def __init__(self, n_f, stride):
            super().__init__(narrow(n_f), stride)

    for name, value in (('conv', conv), ('MemBlock', MemBlock), ('TPool', TPool), ('TGrow', TGrow)):
        setattr(taehv, name, value)
    try:
        yield
    finally:
        for name, value in official.items():
            setattr(taehv, name, value)


def init_weights(model, seed):
    """Every parameter in state-dict order from one generator: conv weights N/sqrt(fan_in) (the decoder's last
    conv OUTPUT_GAIN·N/sqrt(fan_in)), biases 0.05·N (the decoder's last conv 0.5 + 0.05·N)."""
    last = f'decoder.{len(model.decoder) - 1}.'
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.state_dict(keep_vars=True).items():
            value = torch.randn(p.shape, generator=g)
            if name.endswith('bias'):
                value = 0.05 * value + (0.5 if name.startswith(last) else 0.0)
            else:
                value = value / math.sqrt(p[0].numel()) * (OUTPUT_GAIN if name.startswith(last) else 1.0)
            p.copy_(value)


DTYPES = {torch.float64: 'F64', torch.int64: 'I64', torch.float32: 'F32'}


def save(tensors, path: Path, meta):
    """Standard safetensors, written deterministically: metadata first, tensors packed with no holes, 64-bit
    dtypes first then by name, header padded with spaces to a multiple of 8."""
    meta = {'format': 'wan-golden-v1', 'torch': torch.__version__, **meta}
    meta = {k: v if isinstance(v, str) else json.dumps(v) for k, v in meta.items()}
    items = sorted(((k, v.detach().contiguous()) for k, v in tensors.items()),
                   key=lambda kv: (-kv[1].element_size(), kv[0]))
    header, blobs, offset = {'__metadata__': meta}, [], 0
    for name, value in items:
        blob = value.numpy().tobytes()
        header[name] = {'dtype': DTYPES[value.dtype], 'shape': list(value.shape),
                        'data_offsets': [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    path.write_bytes(struct.pack('<Q', len(text)) + text + b''.join(blobs))


def build(taehv, args, widths, **extra):
    torch.manual_seed(0)
    with narrow_widths(taehv, widths):
        return taehv.TAEHV(**args, **extra).eval()


def make(taehv, name, out: Path):
    args, widths, seed, shape, scale = CONFIGS[name]
    model = build(taehv, args, widths)
    init_weights(model, seed)
    state = model.state_dict()
    source = {'repository': REPO, 'commit': COMMIT, 'file': 'taehv.py', 'blob': TAEHV_PY_BLOB}
    config = dict(args, widths={str(k): v for k, v in widths.items()},
                  decoder_widths=[widths[256], widths[128], widths[64], widths[64]],
                  decoder_time_upscale=[False, True, True], decoder_space_upscale=[True, True, True],
                  t_upscale=model.t_upscale, frames_to_trim=model.frames_to_trim)
    construct = ('TAEHV(**config) with the hard-coded widths 256/128/64 mapped through config.widths while '
                 '__init__ runs (conv, MemBlock, TPool, TGrow replaced by thin subclasses; forwards official)')
    save(state, out / f'taehv_tiny_{name}.safetensors',
         {'source': source, 'config': config, 'construct': construct,
          'init': f'torch.manual_seed(0); construct; then every parameter in state-dict order from '
                  f'Generator().manual_seed({seed}): conv weights N/sqrt(fan_in), biases 0.05N; the last decoder conv '
                  f'weights {OUTPUT_GAIN}N/sqrt(fan_in), bias 0.5+0.05N'})

    g = torch.Generator().manual_seed(seed + 1)
    latents = scale * torch.randn(shape, generator=g)
    given = latents.clone()
    io = {'latents': latents}
    calls = {}
    checks = {}
    with torch.no_grad():
        io['frames'] = model.decode_video(latents, parallel=True, show_progress_bar=False)
        calls['frames'] = 'TAEHV.decode_video(latents, parallel=True, show_progress_bar=False)'
        sequential = model.decode_video(latents, parallel=False, show_progress_bar=False)
        checks['parallel_vs_sequential_max_abs'] = (sequential - io['frames']).abs().max().item()
        io['first.frames'] = model.decode_video(latents[:, :1], parallel=True, show_progress_bar=False)
        calls['first.frames'] = 'TAEHV.decode_video(latents[:, :1], parallel=True, show_progress_bar=False)'
        checks['first_vs_frames_prefix_max_abs'] = (io['first.frames'] - io['frames'][:, :1]).abs().max().item()
        if name == 'wan21':
            preview = build(taehv, args, widths, **PREVIEW)
            preview.load_state_dict(preview.patch_tgrow_layers(dict(state)))
            io['preview.frames'] = preview.decode_video(latents, parallel=True, show_progress_bar=False)
            calls['preview.frames'] = (
                f'TAEHV(**config, decoder_time_upscale={PREVIEW["decoder_time_upscale"]}, decoder_space_upscale='
                f'{PREVIEW["decoder_space_upscale"]}) loaded as __init__ does, load_state_dict(patch_tgrow_layers'
                f'(state)) (TGrow weights cut to their last n_f rows); .decode_video(latents, parallel=True, '
                f'show_progress_bar=False)')
            checks['preview_t_upscale'] = preview.t_upscale
            checks['preview_frames_to_trim'] = preview.frames_to_trim
    assert torch.equal(given, latents), 'decode_video changed its input'
    frames = io['frames']
    checks['fraction_clamped'] = ((frames == 0) | (frames == 1)).float().mean().item()
    checks['frames_mean'] = frames.mean().item()
    checks['frames_std'] = frames.std().item()
    # The written file, loaded strictly into a fresh model, gives the same frames bit for bit.
    reloaded = build(taehv, args, widths)
    reloaded.load_state_dict(load_file(str(out / f'taehv_tiny_{name}.safetensors')))
    with torch.no_grad():
        assert torch.equal(reloaded.decode_video(latents, parallel=True, show_progress_bar=False), io['frames'])
    save(io, out / f'taehv_tiny_{name}_io.safetensors',
         {'source': source, 'config': config, 'calls': calls, 'checks': checks,
          'inputs': f'latents = {scale} * randn{tuple(shape)} (NTCHW) from Generator().manual_seed({seed + 1})'})
    print(name, {k: tuple(v.shape) for k, v in io.items()}, checks)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    torch.set_num_threads(1)
    taehv = import_official(Path(sys.argv[1]))
    out = Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name in CONFIGS:
        make(taehv, name, out)


if __name__ == '__main__':
    main()
