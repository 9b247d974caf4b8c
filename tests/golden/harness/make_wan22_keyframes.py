#!/usr/bin/env python3
"""Golden data for Wan 2.2 I2V A14B keyframe conditioning (tests/golden/README.md §12).

Runs the official modules of Wan-Video/Wan2.2 and SVI 2.0 Pro's conditioning unit at the pinned commits below
on CPU in float32, one thread, with the tiny experts and VAE already in the golden folder, and writes:

  wan22_flf_loop_io.safetensors  WanI2V.generate (A14B two-expert loop) with a start AND an end image: y built
                                 with ComfyUI's WanFirstLastFrameToVideo / WAN21.concat_cond layout (§12.1)
  wan22_svi_io.safetensors       SVI 2.0 Pro's y (WanVideoUnit_ImageEmbedderVAE.process) for a first clip and
                                 for 1 and 2 motion latents, plus one low-noise expert forward on it (§12.2)

Usage: make_wan22_keyframes.py WAN22_CHECKOUT SVI22_CHECKOUT OUT_DIR [GOLDEN_DIR]
WAN22_CHECKOUT is a checkout (or `git archive`) of Wan-Video/Wan2.2 at WAN22_COMMIT; SVI22_CHECKOUT one of the
`svi_wan22` branch of Stable-Video-Infinity (mirror millord237/Stable-Video-Infinity) at SVI22_COMMIT (only
`diffsynth/pipelines/wan_video_svi_pro.py` and `diffsynth/diffusion/base_pipeline.py` are read). Nothing of either
is copied: the module files are imported (Wan) or the two needed definitions are taken from the file's syntax tree
and executed (SVI: the diffsynth package cannot be imported without its model zoo). GOLDEN_DIR (default OUT_DIR)
holds wan22_i2v_high_tiny / wan22_i2v_low_tiny / wan_vae_tiny / wan22_i2v_moe_loop_io.safetensors.
"""
import ast
import contextlib
import importlib
import json
import math
import struct
import sys
import types
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from safetensors import safe_open
from safetensors.torch import load_file

WAN22_COMMIT = "42bf4cfaa384bc21833865abc2f9e6c0e67233dc"  # README §9
WAN22_REPO = "Wan-Video/Wan2.2"
SVI22_COMMIT = "ab525e014dbdfd7973221d9e7e3c7a54208bf8d2"  # last commit of wan_video_svi_pro.py on svi_wan22
SVI22_REPO = "millord237/Stable-Video-Infinity (mirror of vita-epfl/Stable-Video-Infinity, branch svi_wan22)"

# The §9.5 run, with a start and an end image (metadata "config").
FLF_RUN = dict(frame_num=9, size=[64, 64], max_area=4096, shift=5.0, sample_solver='unipc', sampling_steps=4,
               guide_scale=[3.5, 3.5], boundary=0.9, num_train_timesteps=1000, seed=2801, input_seed=2802)
SVI_RUN = dict(size=[64, 64], input_seed=2902, cases={'y_first_t3': [9, 0], 'y_k1_t3': [9, 1], 'y_k2_t5': [17, 2]},
               forward_t=700, forward_case='y_k1_t3')


def cpu_attention(q, k, v, q_lens=None, k_lens=None, dropout_p=0., softmax_scale=None, q_scale=None, causal=False,
                  window_size=(-1, -1), deterministic=False, dtype=None, version=None):
    """fp32 softmax(QK^T/sqrt(d))V per head, keys at positions >= k_lens[b] left out ([B, L, H, d] layout)."""
    assert q_lens is None and not causal and tuple(window_size) == (-1, -1) and dropout_p == 0.0 and q_scale is None
    scale = softmax_scale if softmax_scale is not None else 1.0 / math.sqrt(q.size(-1))
    logits = torch.einsum('bqhd,bkhd->bhqk', q.float(), k.float()) * scale
    if k_lens is not None:
        keys = torch.arange(k.size(1))[None, :] >= k_lens[:, None]
        logits = logits.masked_fill(keys[:, None, None, :], float('-inf'))
    return torch.einsum('bhqk,bkhd->bqhd', torch.softmax(logits, -1), v.float()).type_as(q)


class NoAutocast(contextlib.ContextDecorator):

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def image_to_tensor(picture):
    """torchvision's to_tensor of a PIL RGB image: [3, H, W] float in [0, 1] (torchvision is not installed)."""
    return torch.from_numpy(np.array(picture, np.uint8, copy=True)).permute(2, 0, 1).contiguous().float().div(255)


def import_official(checkout: Path):
    """The Wan 2.2 module files, imported unmodified; package __init__ files bypassed, CUDA-only parts replaced."""
    sys.path.insert(0, str(checkout))
    for name in ('wan', 'wan.modules', 'wan.utils', 'wan.distributed'):
        package = types.ModuleType(name)
        package.__path__ = [str(checkout.joinpath(*name.split('.')))]
        sys.modules[name] = package
    fsdp = types.ModuleType('wan.distributed.fsdp')  # FSDP is never used (dit_fsdp=False)
    fsdp.shard_model = None
    sys.modules['wan.distributed.fsdp'] = fsdp
    tokenizers = types.ModuleType('wan.modules.tokenizers')  # T5 is not run
    tokenizers.HuggingfaceTokenizer = None
    sys.modules['wan.modules.tokenizers'] = tokenizers
    torch.cuda.amp.autocast = NoAutocast
    torch.amp.autocast = NoAutocast
    attention = importlib.import_module('wan.modules.attention')
    attention.flash_attention = cpu_attention
    model = importlib.import_module('wan.modules.model')
    model.flash_attention = cpu_attention
    vae2_1 = importlib.import_module('wan.modules.vae2_1')
    importlib.import_module('wan.utils.fm_solvers')  # diffusers probes torchvision's spec on import: before the stub
    importlib.import_module('wan.utils.fm_solvers_unipc')
    tv = types.ModuleType('torchvision')
    tv.transforms = types.ModuleType('torchvision.transforms')
    tv.transforms.functional = types.ModuleType('torchvision.transforms.functional')
    tv.transforms.functional.to_tensor = image_to_tensor
    sys.modules['torchvision'] = tv
    sys.modules['torchvision.transforms'] = tv.transforms
    sys.modules['torchvision.transforms.functional'] = tv.transforms.functional
    torch.cuda.current_device = lambda: 0  # only a default argument of T5EncoderModel, evaluated at import
    image2video = importlib.import_module('wan.image2video')
    return model, vae2_1, image2video


def import_svi(checkout: Path):
    """WanVideoUnit_ImageEmbedderVAE and BasePipeline.preprocess_image from SVI 2.0 Pro's files, taken from their
    syntax trees and executed unmodified (importing diffsynth would pull its whole model zoo)."""

    def definition(path, name):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
                return ast.get_source_segment(path.read_text(), node)
        raise LookupError(f'{name} not in {path}')

    class PipelineUnit:  # diffsynth.diffusion.base_pipeline.PipelineUnit: only the constructor is used

        def __init__(self, **kwargs):
            self.__dict__.update(kwargs)

    namespace = {'torch': torch, 'np': np, 'PipelineUnit': PipelineUnit, 'WanVideoSviProPipeline': object}
    from einops import repeat
    namespace['repeat'] = repeat
    exec(definition(checkout / 'diffsynth/pipelines/wan_video_svi_pro.py', 'WanVideoUnit_ImageEmbedderVAE'), namespace)
    source = definition(checkout / 'diffsynth/diffusion/base_pipeline.py', 'preprocess_image')
    exec(__import__('textwrap').dedent(source), namespace)
    return namespace['WanVideoUnit_ImageEmbedderVAE'], namespace['preprocess_image']


DTYPES = {torch.float64: 'F64', torch.int64: 'I64', torch.float32: 'F32'}


def save(tensors, path: Path, meta):
    """Standard safetensors, written deterministically (as make_clip_wan21_i2v.py): metadata first, tensors packed
    with no holes, 64-bit dtypes first then by name, header padded with spaces to a multiple of 8."""
    meta = dict({'format': 'wan-golden-v1', 'torch': torch.__version__}, **meta)
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


def picture(g, height, width):
    """§9.3 / §9.5's image rule (metadata `inputs` of wan22_i2v_moe_loop_io): a PIL RGB uint8 image."""
    x = torch.linspace(-1, 1, width)[None, :]
    y = torch.linspace(-1, 1, height)[:, None]
    v = torch.zeros(3, height, width)
    for c in range(3):
        for _ in range(3):
            r = torch.rand(4, generator=g)
            v[c] += 0.4 * torch.sin(math.pi * ((0.5 + 2.5 * r[0]) * x + (0.5 + 2.5 * r[1]) * y) + 2 * math.pi * r[3])
    v += 0.1 * torch.randn(3, height, width, generator=g)
    u8 = ((v.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
    return Image.fromarray(u8.permute(1, 2, 0).numpy(), mode='RGB')


def tiny_vae(vae2_1, golden: Path):
    """Wan2_1_VAE (vae2_1.py) with §2's weights, loaded as §9.5/§9.6 did: _video_vae builds WanVAE_ on CPU with
    the same cfg and dim=8 and loads the state dict strictly; the wrapper's __init__ runs unchanged."""
    official = vae2_1._video_vae

    def builder(pretrained_path=None, z_dim=None, device='cpu', **kwargs):
        cfg = dict(dim=8, z_dim=z_dim, dim_mult=[1, 2, 4, 4], num_res_blocks=2, attn_scales=[],
                   temperal_downsample=[False, True, True], dropout=0.0)
        cfg.update(**kwargs)
        model = vae2_1.WanVAE_(**cfg)
        model.load_state_dict(load_file(str(golden / 'wan_vae_tiny.safetensors')), strict=True)
        return model

    vae2_1._video_vae = builder
    vae = vae2_1.Wan2_1_VAE(z_dim=16, vae_pth=None, dtype=torch.float32, device='cpu')
    vae2_1._video_vae = official
    return vae


def tiny_expert(model, golden: Path, name: str):
    with safe_open(str(golden / name), 'pt') as weights:
        meta = json.loads(weights.metadata()['config'])
    torch.manual_seed(0)
    expert = model.WanModel(**{k: tuple(v) if isinstance(v, list) else v for k, v in meta.items()})
    expert.load_state_dict(load_file(str(golden / name)), strict=True)
    return expert, meta


class TextStandIn:
    """T5 is not run: "prompt" gives `context`, anything else `context_null` (as §9.3-§9.5)."""

    def __init__(self, context, context_null):
        self.model = torch.nn.Module()
        self.context, self.context_null = context, context_null

    def __call__(self, texts, device):
        return [self.context if texts[0] == 'prompt' else self.context_null]


def runner_for(image2video, vae, high, low, context, context_null):
    """A WanI2V made with object.__new__ (its __init__ loads checkpoints), set up as §9.5's."""
    runner = object.__new__(image2video.WanI2V)
    runner.device = torch.device('cpu')
    runner.rank = 0
    runner.t5_cpu = False
    runner.init_on_cpu = False
    runner.num_train_timesteps = FLF_RUN['num_train_timesteps']
    runner.boundary = FLF_RUN['boundary']
    runner.param_dtype = torch.bfloat16  # autocast is a no-op: everything runs in float32
    runner.vae_stride = (4, 8, 8)
    runner.patch_size = (1, 2, 2)
    runner.sp_size = 1
    runner.sample_neg_prompt = 'negative'
    runner.vae = vae
    runner.high_noise_model = runner._configure_model(high, False, False, None, False)
    runner.low_noise_model = runner._configure_model(low, False, False, None, False)
    runner.text_encoder = TextStandIn(context, context_null)
    return runner


def run_generate(image2video, runner, img, run, y_override=None):
    """WanI2V.generate unchanged, with recorders; y_override(y) -> the y every model call gets instead."""
    calls, steps, record = [], [], {}
    experts = {'high_noise_model': 1, 'low_noise_model': 0}
    originals = {}
    for name in experts:
        expert = getattr(runner, name)
        originals[name] = expert.forward

        def recording_forward(x, t, context, seq_len, y=None, name=name, official=expert.forward):
            record.setdefault('y_generate', y[0].clone())
            if y_override is not None:
                y = [y_override(y[0])]
            out = official(x, t=t, context=context, seq_len=seq_len, y=y)
            calls.append((experts[name], x[0].clone(), t.clone(), y[0].clone(), out[0].clone(), seq_len))
            return out

        expert.forward = recording_forward

    official_encode = runner.vae.encode

    def recording_encode(videos):
        record['vae_input'] = videos[0].clone()
        return official_encode(videos)

    runner.vae.encode = recording_encode

    class RecordingScheduler(image2video.FlowUniPCMultistepScheduler):

        def set_timesteps(self, *args, **kwargs):
            result = super().set_timesteps(*args, **kwargs)
            record['timesteps'] = self.timesteps.clone()
            record['sigmas'] = self.sigmas.clone()
            return result

        def step(self, model_output, timestep, sample, **kwargs):
            result = super().step(model_output, timestep, sample, **kwargs)
            steps.append(result[0].squeeze(0).clone())
            return result

    official_scheduler = image2video.FlowUniPCMultistepScheduler
    image2video.FlowUniPCMultistepScheduler = RecordingScheduler
    try:
        with torch.no_grad():
            video = runner.generate('prompt', img, max_area=run['max_area'], frame_num=run['frame_num'],
                                    shift=run['shift'], sample_solver=run['sample_solver'],
                                    sampling_steps=run['sampling_steps'], guide_scale=tuple(run['guide_scale']),
                                    n_prompt='negative', seed=run['seed'], offload_model=False)
    finally:
        image2video.FlowUniPCMultistepScheduler = official_scheduler
        runner.vae.encode = official_encode
        for name in experts:
            getattr(runner, name).forward = originals[name]
    return calls, steps, record, video


def loop_tensors(calls, steps, record, run):
    """The §9.5 keys of one generate run."""
    n = run['sampling_steps']
    assert len(calls) == 2 * n and len(steps) == n
    boundary = run['boundary'] * run['num_train_timesteps']
    io = {'timesteps': record['timesteps'].long(), 'sigmas': record['sigmas'].float(), 'x0': steps[-1],
          'seq_len': torch.tensor([calls[0][5]])}
    experts, scales = [], []
    for k in range(n):
        cond, uncond = calls[2 * k], calls[2 * k + 1]
        assert cond[0] == uncond[0] and torch.equal(cond[2], uncond[2])
        assert cond[0] == int(record['timesteps'][k].item() >= boundary)
        experts.append(cond[0])
        scales.append(run['guide_scale'][1] if cond[0] == 1 else run['guide_scale'][0])
        io[f'step{k}.t'] = cond[2].long()
        io[f'step{k}.noise_pred_cond'] = cond[4]
        io[f'step{k}.noise_pred_uncond'] = uncond[4]
        io[f'step{k}.latent'] = steps[k]
    io['expert'] = torch.tensor(experts, dtype=torch.int64)
    io['guide_scale'] = torch.tensor(scales, dtype=torch.float64)
    return io


def comfy_first_last_mask(frames, lat_h, lat_w):
    """ComfyUI's layout, written here (not imported: ComfyUI is not a dependency), as the ComfyUI snapshot a125cd8 has it:
    CUI-n comfy_extras/nodes_wan.py WanFirstLastFrameToVideo (l.181-250) builds the mask in ComfyUI's convention
    (0 = keep) over 4·T' pixel-frame slots (pixel frame 0 repeated 4x), and comfy/model_base.py WAN21.concat_cond
    (l.1098+) turns it into Wan's (1 = given) with 1 - mask; the 4 channels are already there."""
    latent_frames = (frames - 1) // 4 + 1
    mask = torch.ones(1, 1, latent_frames * 4, lat_h, lat_w)
    mask[:, :, :1 + 3] = 0  # start_image.shape[0] + 3
    mask[:, :, -1:] = 0  # end_image.shape[0]
    mask = mask.view(1, latent_frames, 4, lat_h, lat_w).transpose(1, 2)  # [1, 4, T', h, w]
    return (1.0 - mask)[0]


def make_flf_loop(model, vae2_1, image2video, out: Path, golden: Path):
    run = FLF_RUN
    high, config = tiny_expert(model, golden, 'wan22_i2v_high_tiny.safetensors')
    low, _ = tiny_expert(model, golden, 'wan22_i2v_low_tiny.safetensors')
    vae = tiny_vae(vae2_1, golden)

    # The image rule and the runner set-up reproduce §9.5 first (start image only): a check, not stored.
    reference = load_file(str(golden / 'wan22_i2v_moe_loop_io.safetensors'))
    g = torch.Generator().manual_seed(2702)
    img = picture(g, 64, 64)
    context, context_null = torch.randn(9, 48, generator=g), torch.randn(12, 48, generator=g)
    assert torch.equal(context, reference['context']) and torch.equal(context_null, reference['context_null'])
    runner = runner_for(image2video, vae, high, low, context, context_null)
    calls, steps, record, _ = run_generate(image2video, runner, img, dict(run, seed=2701))
    again = loop_tensors(calls, steps, record, run)
    assert torch.equal(record['vae_input'][:, :1], reference['image']), 'the image rule differs from §9.5'
    assert torch.equal(record['y_generate'][:4], reference['msk'])
    check = {'y': (record['y_generate'] - reference['y']).abs().max().item()}
    for key in ('x0', 'step0.noise_pred_cond'):
        check[key] = (again[key] - reference[key]).abs().max().item()
    for key in ('timesteps', 'expert', 'guide_scale', 'step0.t'):
        assert torch.equal(again[key], reference[key]), key
    print('§9.5 reproduced (torch %s vs 1.13): max abs %s' % (torch.__version__, check))

    # Inputs: two pictures, then the contexts.
    g = torch.Generator().manual_seed(run['input_seed'])
    start_img, end_img = picture(g, 64, 64), picture(g, 64, 64)
    context, context_null = torch.randn(9, 48, generator=g), torch.randn(12, 48, generator=g)
    runner = runner_for(image2video, vae, high, low, context, context_null)

    # y as ComfyUI's WanFirstLastFrameToVideo + WAN21.concat_cond build it, with the official VAE: the pictures
    # preprocessed as WanI2V.generate does (to_tensor, [-1, 1], bicubic interpolate to (h, w)), grey 0 between.
    frames, (h, w) = run['frame_num'], run['size']
    lat_h, lat_w = h // 8, w // 8
    resize = lambda im: F.interpolate(image_to_tensor(im).sub_(0.5).div_(0.5)[None], size=(h, w),
                                      mode='bicubic').transpose(0, 1)  # [3, 1, h, w]
    start, end = resize(start_img), resize(end_img)
    video = torch.cat([start, torch.zeros(3, frames - 2, h, w), end], dim=1)
    with torch.no_grad():
        latent = vae.encode([video])[0]
    msk = comfy_first_last_mask(frames, lat_h, lat_w)
    y = torch.cat([msk, latent])

    # WanI2V.generate unchanged, except that the y it hands the experts (msk of pixel frame 0 + the latent of
    # [start, zeros]) is replaced by this y (a wrapper on both experts' forward).
    def replace(y_generate):
        assert torch.equal(y_generate[4:], vae.encode([torch.cat([start, torch.zeros(3, frames - 1, h, w)], 1)])[0])
        return y

    calls, steps, record, _ = run_generate(image2video, runner, start_img, run, replace)
    assert torch.equal(record['vae_input'][:, :1], start)
    assert all(torch.equal(c[3], y) for c in calls)
    io = loop_tensors(calls, steps, record, run)
    noise = torch.randn(16, (frames - 1) // 4 + 1, lat_h, lat_w, generator=torch.Generator().manual_seed(run['seed']))
    assert torch.equal(noise, calls[0][1])
    io.update({'start': start, 'end': end, 'msk': msk, 'y': y, 'context': context, 'context_null': context_null,
               'noise': noise})
    source = {'repository': WAN22_REPO, 'commit': WAN22_COMMIT,
              'files': ['wan/image2video.py (WanI2V.generate)', 'wan/modules/model.py', 'wan/modules/vae2_1.py',
                        'wan/utils/fm_solvers_unipc.py'],
              'y_layout': 'ComfyUI comfy_extras/nodes_wan.py:WanFirstLastFrameToVideo l.181-250 + '
                          'comfy/model_base.py:WAN21.concat_cond l.1098+ (ComfyUI snapshot a125cd8; '
                          'written in the harness, ComfyUI not run)'}
    calls_meta = {
        'driver': 'WanI2V.generate("prompt", start PIL image, max_area, frame_num, shift, sample_solver, '
                  'sampling_steps, guide_scale=tuple, n_prompt="negative", seed, offload_model=False) on an '
                  'object.__new__ WanI2V set up as §9.5 (boundary 0.9, vae_stride (4,8,8), Wan2_1_VAE with '
                  'wan_vae_tiny.safetensors dim 8, experts through _configure_model, text_encoder stand-in); '
                  'run unchanged except that a wrapper on both experts\' forward replaces the y argument by y below',
        'start, end': 'F.interpolate(TF.to_tensor(img).sub_(0.5).div_(0.5)[None], size=(h,w), mode="bicubic")'
                      '.transpose(0,1) [3,1,h,w]: the first and last frame of the video given to vae.encode '
                      '(start is bitwise what generate itself hands its vae.encode)',
        'msk': 'ComfyUI: mask = ones(1,1,4T\',h,w); mask[:,:,:1+3] = 0; mask[:,:,-1:] = 0; '
               'mask.view(1,T\',4,h,w).transpose(1,2); then 1 - mask (concat_cond) -> [4,T\',h,w]: latent 0 all '
               'channels 1, latent T\'-1 channel 3 = 1, 0 elsewhere',
        'y': 'cat([msk, Wan2_1_VAE.encode([cat([start, zeros(3,F-2,h,w), end], 1)])[0]]) -> [20,T\',h,w], given '
             'as y to every model call (cond and uncond)',
        'noise': 'torch.randn(16,T\',h,w, generator=Generator().manual_seed(seed)) as generate draws it (checked '
                 'equal to the step-0 model input)',
        'timesteps, sigmas': 'the scheduler\'s after set_timesteps(sampling_steps, shift=shift)',
        'expert': '1 = high_noise_model ran (t.item() >= boundary*1000), 0 = low_noise_model',
        'guide_scale': 'guide_scale[1] if high else guide_scale[0]; F64',
        'step<k>.t': 'torch.stack([t_k]) I64 [1], the t of both model calls',
        'step<k>.noise_pred_cond / _uncond': 'the expert\'s outputs with context / context_null',
        'step<k>.latent': 'sample_scheduler.step(uncond + g*(cond - uncond), t_k, latent, return_dict=False, '
                          'generator=seed_g)[0][0]',
        'x0': 'the final latent (= step<last>.latent; the decoded video is not stored)',
        'seq_len': 'T\'*h*w/4 as generate computes it'}
    save(io, out / 'wan22_flf_loop_io.safetensors',
         {'source': source, 'config': dict(run, dit=config, vae='wan_vae_tiny.safetensors (Wan 2.1 VAE, dim 8)',
                                           high='wan22_i2v_high_tiny.safetensors',
                                           low='wan22_i2v_low_tiny.safetensors'),
          'calls': calls_meta,
          'inputs': f'Generator().manual_seed({run["input_seed"]}), in order: start image, end image (each a 64x64 '
                    'PIL RGB uint8 image by the rule of wan22_i2v_moe_loop_io `inputs`), context randn(9,48), '
                    f'context_null randn(12,48); noise from Generator().manual_seed({run["seed"]}) inside generate',
          'attention': 'flash_attention replaced by exact fp32 softmax(QK^T/sqrt(D)) V with key-padding mask from '
                       'k_lens; autocast a no-op (float32 throughout)'})
    return check


def make_svi(model, vae2_1, out: Path, golden: Path, svi_checkout: Path):
    unit_class, preprocess_image = import_svi(svi_checkout)
    vae = tiny_vae(vae2_1, golden)
    low, config = tiny_expert(model, golden, 'wan22_i2v_low_tiny.safetensors')
    low.eval().requires_grad_(False)
    run = SVI_RUN
    h, w = run['size']

    g = torch.Generator().manual_seed(run['input_seed'])
    anchor_img = picture(g, h, w)
    prev = torch.randn(16, 3, h // 8, w // 8, generator=g)  # stands for the previous clip's denoised latents
    x = torch.randn(16, 3, h // 8, w // 8, generator=g)
    context = torch.randn(9, 48, generator=g)

    encoded = []

    def encode(videos, device=None, tiled=None, tile_size=None, tile_stride=None):
        # DiffSynth's WanVideoVAE.encode returns the stacked normalised latents; the official wrapper stands in.
        encoded.append(videos[0].clone())
        return torch.stack(vae.encode(videos))

    pipe = types.SimpleNamespace(torch_dtype=torch.float32, device='cpu', load_models_to_device=lambda names: None,
                                 dit=types.SimpleNamespace(require_vae_embedding=True),
                                 vae=types.SimpleNamespace(encode=encode))
    pipe.preprocess_image = lambda image, **kw: preprocess_image(pipe, image, **kw)
    unit = unit_class()
    io, anchor_latents = {}, []
    with torch.no_grad():
        for key, (frames, k) in run['cases'].items():
            encoded.clear()
            result = unit.process(pipe, input_image=anchor_img, end_image=None, num_frames=frames, height=h,
                                  width=w, tiled=True, tile_size=(30, 52), tile_stride=(15, 26), anchor=anchor_img,
                                  inference_mode=True, prev_last_latent=prev if k else None, num_motion_latent=k)
            assert len(encoded) == 1 and encoded[0].shape == (3, 1, h, w)
            io[key] = result['y'][0]
            anchor_latents.append(io[key][4:, :1].clone())
            io['anchor'] = encoded[0]
        assert all(torch.equal(a, anchor_latents[0]) for a in anchor_latents)
        io['anchor_latent'] = anchor_latents[0]
        assert torch.equal(io['anchor_latent'], vae.encode([io['anchor']])[0])
        y = io[run['forward_case']]
        t = torch.tensor([run['forward_t']], dtype=torch.int64)
        seq_len = y.shape[1] * (h // 16) * (w // 16)
        io['svi_forward_out'] = low([x], t=t, context=[context], seq_len=seq_len, y=[y])[0]
    io.update({'prev_latent': prev, 'svi_x': x, 'svi_t': t, 'svi_context': context,
               'svi_seq_len': torch.tensor([seq_len])})
    source = {'repository': SVI22_REPO, 'commit': SVI22_COMMIT,
              'files': ['diffsynth/pipelines/wan_video_svi_pro.py (WanVideoUnit_ImageEmbedderVAE.process)',
                        'diffsynth/diffusion/base_pipeline.py (BasePipeline.preprocess_image)'],
              'vae_and_dit': f'{WAN22_REPO}@{WAN22_COMMIT} wan/modules/vae2_1.py (Wan2_1_VAE), wan/modules/model.py'}
    calls_meta = {
        'y_first_t3, y_k1_t3, y_k2_t5': 'WanVideoUnit_ImageEmbedderVAE().process(pipe, input_image=anchor picture, '
                                        'end_image=None, num_frames=9/9/17, height=64, width=64, anchor=anchor '
                                        'picture, inference_mode=True, prev_last_latent=None/prev_latent/prev_latent, '
                                        'num_motion_latent=0/1/2)["y"][0] -> [20,T\',8,8] = cat([msk (pixel frame 0 '
                                        'only: latent 0 all 4 channels 1, rest 0), anchor_latent, '
                                        'prev_latent[:, -k:], zeros])',
        'pipe': 'a stand-in: torch_dtype float32, device cpu, preprocess_image = the official '
                'BasePipeline.preprocess_image (np.array(img)*(2/255)-1, H W C -> 1 C H W), vae.encode = '
                'torch.stack(Wan2_1_VAE.encode(videos)) (DiffSynth\'s WanVideoVAE replaced by the official Wan 2.2 '
                'wrapper: tiling arguments ignored, one 8x8 latent tile anyway)',
        'anchor': 'the [3,1,64,64] tensor process handed to vae.encode (anchor.transpose(0,1))',
        'anchor_latent': 'Wan2_1_VAE.encode([anchor])[0] [16,1,8,8] (the same in all three calls, checked)',
        'svi_forward_out': 'WanModel.forward(x=[svi_x], t=svi_t, context=[svi_context], seq_len=svi_seq_len, '
                           'y=[y_k1_t3])[0] of wan22_i2v_low_tiny.safetensors'}
    save(io, out / 'wan22_svi_io.safetensors',
         {'source': source, 'config': dict(run, dit=config, low='wan22_i2v_low_tiny.safetensors',
                                           vae='wan_vae_tiny.safetensors (Wan 2.1 VAE, dim 8)', temporal=4),
          'calls': calls_meta,
          'inputs': f'Generator().manual_seed({run["input_seed"]}), in order: anchor picture (64x64 PIL RGB uint8, '
                    'rule of wan22_i2v_moe_loop_io `inputs`), prev_latent randn(16,3,8,8) (stands for the previous '
                    'clip\'s denoised latents), svi_x randn(16,3,8,8), svi_context randn(9,48)',
          'attention': 'flash_attention replaced by exact fp32 softmax(QK^T/sqrt(D)) V; autocast a no-op'})


def main():
    wan, svi, out = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    golden = Path(sys.argv[4]) if len(sys.argv) > 4 else out
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    model, vae2_1, image2video = import_official(wan)
    make_flf_loop(model, vae2_1, image2video, out, golden)
    make_svi(model, vae2_1, out, golden, svi)


if __name__ == '__main__':
    main()
