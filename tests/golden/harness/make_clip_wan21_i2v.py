#!/usr/bin/env python3
"""Golden data for the CLIP vision tower and the Wan 2.1 I2V / FLF2V DiT (tests/golden/README.md §11).

Runs the official modules of Wan-Video/Wan2.1 at the pinned commit below on CPU in float32 with tiny seeded
configurations and writes:

  clip_vision_tiny.safetensors      tiny VisionTransformer, official open-clip names (visual.*)
  clip_vision_tiny_hf.safetensors   the same weights under the HF / ComfyUI clip_vision names
  clip_vision_tiny_io.safetensors   image in [-1, 1] at a non-square size, the preprocessed input, the output
  wan21_i2v_tiny.safetensors        tiny WanModel(model_type='i2v') with img_emb
  wan21_i2v_tiny_io.safetensors     x, y, t, context, clip_fea, outputs, intermediates
  wan21_flf2v_tiny.safetensors      tiny WanModel(model_type='flf2v') with img_emb.emb_pos
  wan21_flf2v_tiny_io.safetensors   the same for first and last frame
  clip_vision_loop_tiny.safetensors a 224-pixel tiny tower whose 257 features fit the FLF2V DiT
  wan21_flf2v_loop_io.safetensors   WanFLF2V.generate end to end (81 frames, 16x16 pixels, 4 steps)

Usage: make_clip_wan21_i2v.py WAN21_CHECKOUT OUT_DIR [GOLDEN_DIR]
GOLDEN_DIR (default OUT_DIR) holds wan_vae_tiny.safetensors (§2).
WAN21_CHECKOUT is a checkout (or `git archive`) of Wan-Video/Wan2.1 at COMMIT; nothing of it is copied.
"""
import contextlib
import importlib
import json
import math
import struct
import sys
import types
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

COMMIT = "9737cba9c1c3c4d04b33fcad41c111989865d315"
REPO = "Wan-Video/Wan2.1"
CLIP_MEAN = [0.48145466, 0.4578275, 0.40821073]
CLIP_STD = [0.26862954, 0.26130258, 0.27577711]

# Tiny configurations (written into each file's metadata "config").
CLIP_CONFIG = dict(image_size=42, patch_size=14, dim=32, mlp_ratio=4, out_dim=24, num_heads=2, num_layers=3,
                   pool_type='token', pre_norm=True, post_norm=False, activation='gelu')
CLIP_FEATURE_DIM = 16  # the width of the CLIP features the tiny DiTs take (1280 in the real models)
DIT_CONFIG = dict(patch_size=(1, 2, 2), text_len=512, in_dim=36, dim=32, ffn_dim=64, freq_dim=16, text_dim=32,
                  out_dim=16, num_heads=2, num_layers=2, window_size=(-1, -1), qk_norm=True, cross_attn_norm=True,
                  eps=1e-6)


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


def import_official(checkout: Path):
    """The official module files, imported unmodified, with the package __init__ files bypassed."""
    sys.path.insert(0, str(checkout))
    for name, path in (('wan', checkout / 'wan'), ('wan.modules', checkout / 'wan' / 'modules')):
        package = types.ModuleType(name)
        package.__path__ = [str(path)]
        sys.modules[name] = package
    torch.cuda.amp.autocast = NoAutocast
    attention = importlib.import_module('wan.modules.attention')
    attention.flash_attention = cpu_attention
    model = importlib.import_module('wan.modules.model')
    if importlib.util.find_spec('torchvision') is None:  # clip.py imports it for its PIL transforms only
        tv = types.ModuleType('torchvision')
        tv.transforms = types.ModuleType('torchvision.transforms')
        tv.transforms.functional = types.ModuleType('torchvision.transforms.functional')
        tv.transforms.functional.to_tensor = image_to_tensor
        tv.transforms.functional.center_crop = refuse_center_crop
        sys.modules['torchvision'] = tv
        sys.modules['torchvision.transforms'] = tv.transforms
        sys.modules['torchvision.transforms.functional'] = tv.transforms.functional
    clip = importlib.import_module('wan.modules.clip')
    model.flash_attention = cpu_attention
    clip.flash_attention = cpu_attention
    return model, clip


class Picture:
    """What WanFLF2V.generate reads of a PIL RGB image: .size (width, height) and the uint8 pixels."""

    def __init__(self, pixels):
        self.pixels = pixels  # uint8 [H, W, 3]
        self.size = (pixels.shape[1], pixels.shape[0])


def image_to_tensor(picture):
    """torchvision's to_tensor of an RGB uint8 image: [3, H, W] float in [0, 1]."""
    return picture.pixels.permute(2, 0, 1).float().div(255)


def refuse_center_crop(*args, **kwargs):
    raise AssertionError('the first and last frame have one size here: center_crop is not reached')


def is_norm(module):
    return isinstance(module, nn.LayerNorm) or type(module).__name__ == 'WanRMSNorm'


def init_weights(root: nn.Module, seed: int):
    """Every parameter, in state-dict order, from one generator: norm weights 1 + 0.1·N, biases 0.05·N,
    modulation 0.1·N, embeddings (class, position, emb_pos) 0.5·N, every other weight N / sqrt(fan_in)."""
    owners = {}
    for module_name, module in root.named_modules():
        for param_name, _ in module.named_parameters(recurse=False):
            owners[f'{module_name}.{param_name}' if module_name else param_name] = module
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in root.state_dict(keep_vars=True).items():
            value = torch.randn(p.shape, generator=g)
            leaf = name.rsplit('.', 1)[-1]
            if is_norm(owners[name]) and leaf == 'weight':
                value = 1 + 0.1 * value
            elif leaf == 'bias':
                value = 0.05 * value
            elif 'modulation' in name:
                value = 0.1 * value
            elif leaf in ('cls_embedding', 'pos_embedding', 'emb_pos'):
                value = 0.5 * value
            else:
                value = value / math.sqrt(p[0].numel())
            p.copy_(value)


def metadata(extra):
    base = {'format': 'wan-golden-v1', 'torch': torch.__version__}
    base.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in extra.items()})
    return base


DTYPES = {torch.float64: 'F64', torch.int64: 'I64', torch.float32: 'F32'}


def save(tensors, path: Path, meta):
    """Standard safetensors, written deterministically: metadata first, tensors packed with no holes, 64-bit
    dtypes first then by name, header padded with spaces to a multiple of 8."""
    items = sorted(((k, v.detach().contiguous()) for k, v in tensors.items()),
                   key=lambda kv: (-kv[1].element_size(), kv[0]))
    header, blobs, offset = {'__metadata__': metadata(meta)}, [], 0
    for name, value in items:
        blob = value.numpy().tobytes()
        header[name] = {'dtype': DTYPES[value.dtype], 'shape': list(value.shape),
                        'data_offsets': [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header, separators=(',', ':')).encode()
    text += b' ' * (-len(text) % 8)
    path.write_bytes(struct.pack('<Q', len(text)) + text + b''.join(blobs))


def hf_names(state, layers):
    """The open-clip visual tower under HF CLIPVisionModel names (ComfyUI clip_vision_h.safetensors)."""
    dim = state['visual.cls_embedding'].shape[-1]
    out = {
        'vision_model.embeddings.class_embedding': state['visual.cls_embedding'].reshape(dim),
        'vision_model.embeddings.patch_embedding.weight': state['visual.patch_embedding.weight'],
        'vision_model.embeddings.position_embedding.weight': state['visual.pos_embedding'][0],
        'vision_model.embeddings.position_ids': torch.arange(state['visual.pos_embedding'].shape[1])[None],
        'vision_model.pre_layrnorm.weight': state['visual.pre_norm.weight'],
        'vision_model.pre_layrnorm.bias': state['visual.pre_norm.bias'],
        'vision_model.post_layernorm.weight': state['visual.post_norm.weight'],
        'vision_model.post_layernorm.bias': state['visual.post_norm.bias'],
        'visual_projection.weight': state['visual.head'].t(),
    }
    for i in range(layers):
        src, dst = f'visual.transformer.{i}.', f'vision_model.encoder.layers.{i}.'
        for a, b in (('norm1', 'layer_norm1'), ('norm2', 'layer_norm2'), ('attn.proj', 'self_attn.out_proj'),
                     ('mlp.0', 'mlp.fc1'), ('mlp.2', 'mlp.fc2')):
            out[dst + b + '.weight'] = state[src + a + '.weight']
            out[dst + b + '.bias'] = state[src + a + '.bias']
        for part, chunk in zip(('q', 'k', 'v'), range(3)):
            out[dst + f'self_attn.{part}_proj.weight'] = state[src + 'attn.to_qkv.weight'].chunk(3, 0)[chunk]
            out[dst + f'self_attn.{part}_proj.bias'] = state[src + 'attn.to_qkv.bias'].chunk(3, 0)[chunk]
    return out


def make_clip(clip, out: Path):
    torch.manual_seed(0)
    visual = clip.VisionTransformer(**CLIP_CONFIG).eval()
    init_weights(visual, 3101)
    state = {'visual.' + k: v for k, v in visual.state_dict().items()}
    source = {'repository': REPO, 'commit': COMMIT, 'file': 'wan/modules/clip.py'}
    common = {'source': source, 'config': CLIP_CONFIG,
              'init': 'torch.manual_seed(0); VisionTransformer(**config); then every parameter in state-dict order '
                      'from Generator().manual_seed(3101): LayerNorm weights 1+0.1N, biases 0.05N, cls_embedding and '
                      'pos_embedding 0.5N, other weights N/sqrt(fan_in)'}
    save(state, out / 'clip_vision_tiny.safetensors', common)
    hf = hf_names(state, CLIP_CONFIG['num_layers'])
    hf_config = {'hidden_size': CLIP_CONFIG['dim'], 'num_attention_heads': CLIP_CONFIG['num_heads'],
                 'num_hidden_layers': CLIP_CONFIG['num_layers'], 'patch_size': CLIP_CONFIG['patch_size'],
                 'image_size': CLIP_CONFIG['image_size'], 'hidden_act': 'gelu',
                 'intermediate_size': CLIP_CONFIG['dim'] * CLIP_CONFIG['mlp_ratio']}
    save(hf, out / 'clip_vision_tiny_hf.safetensors',
         dict(common, config=hf_config, construct='clip_vision_tiny.safetensors renamed: to_qkv split in q, k, v '
              'thirds; cls_embedding [1,1,d] -> [d]; pos_embedding [1,T,d] -> [T,d]; head [d,o] transposed'))

    # Inputs: a 60x84 image in [-1, 1] (smooth sinusoids plus noise), batch 2 (first and last frame).
    g = torch.Generator().manual_seed(3102)
    yy, xx = torch.meshgrid(torch.arange(60.0), torch.arange(84.0), indexing='ij')
    frames = []
    for _ in range(2):
        channels = []
        for _ in range(3):
            f = 0.05 + 0.25 * torch.rand(2, generator=g)
            phase = 6.283 * torch.rand(2, generator=g)
            channels.append(0.6 * torch.sin(f[0] * xx + phase[0]) * torch.cos(f[1] * yy + phase[1]))
        frames.append((torch.stack(channels) + 0.15 * torch.randn(3, 60, 84, generator=g)).clamp(-1, 1))
    image = torch.stack(frames)  # [2, 3, 60, 84]

    # CLIPModel.visual on a stand-in object (its __init__ loads the XLM-RoBERTa CLIP checkpoint): the official
    # method body runs unchanged; the model is the tiny tower and transforms[-1] the CLIP Normalize.
    class Normalize:

        def __call__(self, x):
            return (x - torch.tensor(CLIP_MEAN).view(-1, 1, 1)) / torch.tensor(CLIP_STD).view(-1, 1, 1)

    holder = types.SimpleNamespace(image_size=CLIP_CONFIG['image_size'], visual=visual)
    stand_in = types.SimpleNamespace(dtype=torch.float32, model=holder,
                                     transforms=types.SimpleNamespace(transforms=[Normalize()]))
    captured = {}
    original_forward = visual.forward

    def recording_forward(x, *args, **kwargs):
        captured['pixels'] = x.clone()
        return original_forward(x, *args, **kwargs)

    visual.forward = recording_forward
    with torch.no_grad():
        encoded = clip.CLIPModel.visual(stand_in, [image[0][:, None], image[1][:, None]])
        visual.forward = original_forward
        full = visual(captured['pixels'])  # all blocks (use_31_block=False), for contrast
    io = {'image': image, 'pixels': captured['pixels'], 'out': encoded, 'out_all_blocks': full,
          'mean': torch.tensor(CLIP_MEAN), 'std': torch.tensor(CLIP_STD)}
    calls = {
        'pixels': 'the tensor CLIPModel.visual hands to model.visual: F.interpolate(u.transpose(0,1), size=(42,42), '
                  'mode=bicubic, align_corners=False) per video, cat, mul_(0.5).add_(0.5), Normalize(mean, std)',
        'out': 'CLIPModel.visual([image[0][:, None], image[1][:, None]]) = VisionTransformer.forward(pixels, '
               'use_31_block=True): the hidden state after num_layers-1 blocks, no post_norm, no head',
        'out_all_blocks': 'VisionTransformer.forward(pixels) (every block, still no post_norm)'}
    save(io, out / 'clip_vision_tiny_io.safetensors',
         {'source': source, 'config': CLIP_CONFIG, 'calls': calls,
          'inputs': 'image [2,3,60,84]: per frame and channel 0.6 sin(fx x + px) cos(fy y + py), f in [0.05, 0.3), '
                    'p in [0, 2pi), plus 0.15 N, clamped to [-1, 1]; Generator().manual_seed(3102)',
          'mean': CLIP_MEAN, 'std': CLIP_STD})
    return out


def make_dit(model, model_type: str, seed: int, out: Path, stem: str):
    official_mlp = model.MLPProj

    class NarrowMLPProj(official_mlp):
        """The official MLPProj built for CLIP_FEATURE_DIM features instead of its hard-coded 1280."""

        def __init__(self, in_dim, out_dim, flf_pos_emb=False):
            assert in_dim == 1280
            super().__init__(CLIP_FEATURE_DIM, out_dim, flf_pos_emb)
            if flf_pos_emb:
                self.emb_pos = nn.Parameter(torch.zeros(1, self.emb_pos.shape[1], CLIP_FEATURE_DIM))

    model.MLPProj = NarrowMLPProj
    torch.manual_seed(0)
    config = dict(DIT_CONFIG, model_type=model_type)
    dit = model.WanModel(**config).eval()
    model.MLPProj = official_mlp
    init_weights(dit, seed)
    source = {'repository': REPO, 'commit': COMMIT, 'file': 'wan/modules/model.py'}
    meta_config = dict(config, image_dim=CLIP_FEATURE_DIM)
    save(dit.state_dict(), out / f'{stem}.safetensors',
         {'source': source, 'config': meta_config,
          'init': f'torch.manual_seed(0); WanModel(**config) with MLPProj(image_dim) instead of MLPProj(1280); then '
                  f'every parameter in state-dict order from Generator().manual_seed({seed}): LayerNorm / RMSNorm '
                  f'weights 1+0.1N, biases 0.05N, modulation 0.1N, emb_pos 0.5N, other weights N/sqrt(fan_in)'})

    flf = model_type == 'flf2v'
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(16, 3, 6, 10, generator=g)
    latent = torch.randn(16, 3, 6, 10, generator=g)
    context = torch.randn(7, 32, generator=g)
    context_null = torch.randn(11, 32, generator=g)
    clip_fea = torch.randn(2 if flf else 1, 257, CLIP_FEATURE_DIM, generator=g)
    mask = torch.zeros(4, 3, 6, 10)
    mask[:, 0] = 1  # the first latent frame is known
    if flf:
        mask[3, -1] = 1  # the last pixel frame is the last latent frame's channel 3
    y = torch.cat([mask, latent])
    t = torch.tensor([637.0])
    seq_len = 3 * 3 * 5

    inter = {}
    hooks = [dit.img_emb.register_forward_hook(lambda m, i, o: inter.__setitem__('inter.img_emb', o.clone()))]
    for name in ('blocks.0.cross_attn', 'blocks.0', 'blocks.1'):
        module = dit.get_submodule(name)
        hooks.append(module.register_forward_hook(
            lambda m, i, o, name=name: inter.__setitem__('inter.' + name, o.clone())))
    with torch.no_grad():
        out_ = dit(x=[x], t=t, context=[context], seq_len=seq_len, clip_fea=clip_fea, y=[y])[0]
        for h in hooks:
            h.remove()
        out_null = dit(x=[x], t=t, context=[context_null], seq_len=seq_len, clip_fea=clip_fea, y=[y])[0]
        # Without the image tokens' attention (k_img, v_img), for contrast: how much the image branch matters.
        io = {'x': x, 'y': y, 't': t, 'context': context, 'context_null': context_null, 'clip_fea': clip_fea,
              'seq_len': torch.tensor([seq_len]), 'out': out_, 'out_null': out_null}
        io.update(inter)
        calls = {
            'out': f"WanModel.forward(x=[x], t=t, context=[context], seq_len={seq_len}, clip_fea=clip_fea, "
                   f"y=[y])[0]",
            'out_null': 'the same with context=[context_null] (the unconditional pass of the pipelines: same '
                        'clip_fea and y)',
            'inter.img_emb': 'output of WanModel.img_emb (MLPProj) during the out call',
            'inter.blocks.0.cross_attn': 'output of WanI2VCrossAttention.forward in block 0 (before the residual)',
            'inter.blocks.0': 'output of WanAttentionBlock 0', 'inter.blocks.1': 'output of WanAttentionBlock 1'}
        if flf:
            # ComfyUI's MLPProj with one image (start frame only): emb_pos[:, :257] is added to the 257 tokens.
            official_forward = type(dit.img_emb).forward

            def start_only(self, image_embeds):
                return self.proj(image_embeds + self.emb_pos[:, :image_embeds.shape[1]])

            type(dit.img_emb).forward = start_only
            io['start_only.out'] = dit(x=[x], t=t, context=[context], seq_len=seq_len, clip_fea=clip_fea[:1],
                                       y=[y])[0]
            type(dit.img_emb).forward = official_forward
            calls['start_only.out'] = ('the out call with clip_fea[:1] and MLPProj.forward replaced by ComfyUI\'s rule '
                                       'proj(image_embeds + emb_pos[:, :n]) (comfy/ldm/wan/model.py): not an official '
                                       'call, the official view(-1, 514, d) refuses 257 tokens')
    save(io, out / f'{stem}_io.safetensors',
         {'source': source, 'config': meta_config, 'calls': calls,
          'inputs': f'Generator().manual_seed({seed + 1}), in order: x randn(16,3,6,10), latent randn(16,3,6,10), '
                    f'context randn(7,32), context_null randn(11,32), clip_fea randn({2 if flf else 1},257,'
                    f'{CLIP_FEATURE_DIM}); y = cat(mask 4ch, latent) with mask 1 on latent frame 0' +
                    (' and on channel 3 of the last latent frame' if flf else '') + '; t = [637.0]'})


def make_flf2v_loop(model, clip, out: Path, golden: Path):
    """WanFLF2V.generate run unchanged on a stand-in object holding tiny parts: the FLF2V DiT of §11.3, a
    224-pixel CLIP tower with 16-wide features (257 tokens, what the DiT takes), the §2 VAE, and seeded contexts
    instead of T5."""
    for name in ('wan.utils', 'wan.distributed'):
        package = types.ModuleType(name)
        package.__path__ = [str(Path(sys.modules['wan'].__path__[0]) / name.split('.')[1])]
        sys.modules[name] = package
    vae_module = importlib.import_module('wan.modules.vae')
    official_video_vae = vae_module._video_vae

    def tiny_video_vae(pretrained_path=None, z_dim=None, device='cpu', **kwargs):
        return official_video_vae(pretrained_path, z_dim, device, dim=8, **kwargs)  # the §2 width

    vae_module._video_vae = tiny_video_vae
    torch.cuda.current_device = lambda: 0  # only a default argument of T5EncoderModel, evaluated at import
    flf = importlib.import_module('wan.first_last_frame2video')
    from safetensors.torch import load_file

    loop_clip_config = dict(CLIP_CONFIG, image_size=224, dim=CLIP_FEATURE_DIM, out_dim=CLIP_FEATURE_DIM, num_layers=2)
    torch.manual_seed(0)
    visual = clip.VisionTransformer(**loop_clip_config).eval()
    init_weights(visual, 3401)
    source = {'repository': REPO, 'commit': COMMIT, 'file': 'wan/first_last_frame2video.py'}
    save({'visual.' + k: v for k, v in visual.state_dict().items()}, out / 'clip_vision_loop_tiny.safetensors',
         {'source': dict(source, file='wan/modules/clip.py'), 'config': loop_clip_config,
          'init': 'as clip_vision_tiny.safetensors, from Generator().manual_seed(3401)'})

    official_mlp = model.MLPProj

    class NarrowMLPProj(official_mlp):

        def __init__(self, in_dim, out_dim, flf_pos_emb=False):
            super().__init__(CLIP_FEATURE_DIM, out_dim, flf_pos_emb)
            self.emb_pos = nn.Parameter(torch.zeros(1, self.emb_pos.shape[1], CLIP_FEATURE_DIM))

    model.MLPProj = NarrowMLPProj
    torch.manual_seed(0)
    dit = model.WanModel(**dict(DIT_CONFIG, model_type='flf2v')).eval()
    model.MLPProj = official_mlp
    dit.load_state_dict(load_file(str(golden / 'wan21_flf2v_tiny.safetensors')))

    vae_path = out / 'wan_vae_tiny.pth.tmp'
    torch.save(load_file(str(golden / 'wan_vae_tiny.safetensors')), str(vae_path))
    vae = vae_module.WanVAE(vae_pth=str(vae_path), device='cpu')
    vae_path.unlink()

    class Normalize:

        def __call__(self, x):
            return (x - torch.tensor(CLIP_MEAN).view(-1, 1, 1)) / torch.tensor(CLIP_STD).view(-1, 1, 1)

    class Holder(nn.Module):

        def __init__(self):
            super().__init__()
            self.image_size = loop_clip_config['image_size']
            self.visual = visual

    clip_stand_in = types.SimpleNamespace(dtype=torch.float32, model=Holder(),
                                          transforms=types.SimpleNamespace(transforms=[Normalize()]))
    clip_stand_in.visual = lambda videos: clip.CLIPModel.visual(clip_stand_in, videos)

    g = torch.Generator().manual_seed(3402)
    yy, xx = torch.meshgrid(torch.arange(16.0), torch.arange(16.0), indexing='ij')
    frames = []
    for _ in range(2):
        f = 0.2 + 0.5 * torch.rand(3, 2, generator=g)
        phase = 6.283 * torch.rand(3, 2, generator=g)
        smooth = torch.stack([torch.sin(f[c, 0] * xx + phase[c, 0]) * torch.cos(f[c, 1] * yy + phase[c, 1])
                              for c in range(3)], -1)
        pixels = (127.5 + 90 * smooth + 20 * torch.randn(16, 16, 3, generator=g)).round().clamp(0, 255)
        frames.append(pixels.to(torch.uint8))
    context = torch.randn(7, 32, generator=g)
    context_null = torch.randn(11, 32, generator=g)

    record = {}
    calls = []
    official_forward = dit.forward

    def recording_forward(x, t, context, seq_len, clip_fea=None, y=None):
        result = official_forward(x, t=t, context=context, seq_len=seq_len, clip_fea=clip_fea, y=y)
        calls.append((t.clone(), result[0].clone(), clip_fea.clone(), y[0].clone(), seq_len))
        return result

    dit.forward = recording_forward
    official_encode = vae.encode

    def recording_encode(videos):
        record['vae_input'] = videos[0].clone()
        return official_encode(videos)

    vae.encode = recording_encode
    steps = []

    class RecordingScheduler(flf.FlowUniPCMultistepScheduler):

        def set_timesteps(self, *args, **kwargs):
            result = super().set_timesteps(*args, **kwargs)
            record['timesteps'] = self.timesteps.clone()
            record['sigmas'] = self.sigmas.clone()
            return result

        def step(self, model_output, timestep, sample, **kwargs):
            result = super().step(model_output, timestep, sample, **kwargs)
            steps.append(result[0].squeeze(0).clone())
            return result

    flf.FlowUniPCMultistepScheduler = RecordingScheduler
    runner = object.__new__(flf.WanFLF2V)
    runner.device = torch.device('cpu')
    runner.rank = 0
    runner.t5_cpu = True
    runner.num_train_timesteps = 1000
    runner.param_dtype = torch.float32
    runner.vae_stride = (4, 8, 8)
    runner.patch_size = (1, 2, 2)
    runner.sp_size = 1
    runner.sample_neg_prompt = 'negative'
    runner.vae = vae
    runner.clip = clip_stand_in
    runner.model = dit
    runner.text_encoder = lambda texts, device: [context if texts[0] == 'prompt' else context_null]
    run = dict(input_prompt='prompt', max_area=256, frame_num=81, shift=16.0, sample_solver='unipc',
               sampling_steps=4, guide_scale=5.0, n_prompt='negative', seed=3403, offload_model=False)
    with torch.no_grad():
        video = runner.generate(first_frame=Picture(frames[0]), last_frame=Picture(frames[1]), **run)

    first = frames[0].permute(2, 0, 1).float().div(255).sub(0.5).div(0.5)
    last = frames[1].permute(2, 0, 1).float().div(255).sub(0.5).div(0.5)
    assert len(calls) == 2 * run['sampling_steps']
    io = {'first_frame': first, 'last_frame': last, 'context': context, 'context_null': context_null,
          'clip_context': calls[0][2], 'y': calls[0][3], 'timesteps': record['timesteps'].long(),
          'sigmas': record['sigmas'].float(), 'x0': steps[-1], 'video_frames_0_40_80': video[:, [0, 40, 80]]}
    with torch.no_grad():
        io['noise'] = torch.randn(16, 21, 2, 2, generator=torch.Generator().manual_seed(run['seed']))
    for k in range(run['sampling_steps']):
        io[f'step{k}.t'] = calls[2 * k][0].long()
        io[f'step{k}.noise_pred_cond'] = calls[2 * k][1]
        io[f'step{k}.noise_pred_uncond'] = calls[2 * k + 1][1]
        io[f'step{k}.latent'] = steps[k]
    assert torch.equal(record['vae_input'][:, 1:-1], torch.zeros_like(record['vae_input'][:, 1:-1]))
    save(io, out / 'wan21_flf2v_loop_io.safetensors',
         {'source': source, 'config': dict(DIT_CONFIG, model_type='flf2v', image_dim=CLIP_FEATURE_DIM),
          'clip_config': loop_clip_config, 'run': {k: v for k, v in run.items()},
          'inputs': 'Generator().manual_seed(3402): two 16x16 RGB uint8 frames (per channel 127.5 + 90 sin(fx x + px) '
                    'cos(fy y + py), f in [0.2, 0.7), plus 20 N, rounded, clamped), then context randn(7,32), '
                    'context_null randn(11,32)',
          'calls': {
              'generate': 'WanFLF2V.generate(first_frame, last_frame, **run) on a stand-in object: model = '
                          'wan21_flf2v_tiny.safetensors, clip = clip_vision_loop_tiny.safetensors through '
                          'CLIPModel.visual, vae = WanVAE of wan_vae_tiny.safetensors, text_encoder = the two contexts',
              'first_frame, last_frame': 'TF.to_tensor(frame).sub_(0.5).div_(0.5) as generate computes them',
              'clip_context': 'clip.visual([first[:, None], last[:, None]]), [2, 257, 16], as the DiT received it',
              'y': 'cat(msk, vae.encode([cat(bicubic(first), zeros(3, 79), bicubic(last))])) as the DiT received it',
              'stepK.*': 'the cond / uncond DiT outputs and the scheduler step output of step K',
              'x0': 'the final latent; video_frames_0_40_80: frames 0, 40, 80 of the decoded video'}})


def main():
    checkout, out = Path(sys.argv[1]), Path(sys.argv[2])
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float32)
    model, clip = import_official(checkout)
    make_clip(clip, out)
    make_dit(model, 'i2v', 3201, out, 'wan21_i2v_tiny')
    make_dit(model, 'flf2v', 3301, out, 'wan21_flf2v_tiny')
    make_flf2v_loop(model, clip, out, Path(sys.argv[3]) if len(sys.argv) > 3 else out)


if __name__ == '__main__':
    main()
