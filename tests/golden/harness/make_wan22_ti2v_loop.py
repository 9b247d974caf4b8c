#!/usr/bin/env python3
"""Golden data: the Wan 2.2 TI2V image-to-video loop with another run configuration (tests/golden/README.md §9.3b).

§9.3's loop file was made with shift 5.0, guidance 5.0, 4 steps and seed 2501; a check that hard-codes those
passes it and proves nothing of the next configuration. This run calls the official WanTI2V.generate (-> i2v) at
the pinned commit on CPU in float32, one thread, with §9.1's tiny DiT and §9.2's tiny Wan 2.2 VAE and another
shift, guidance, step count and seed, and writes

  wan22_ti2v_loop2_io.safetensors   the same tensors as wan22_ti2v_loop_io.safetensors (§9.3), its run in
                                    metadata "config"

Usage: make_wan22_ti2v_loop.py WAN22_CHECKOUT OUT_DIR [GOLDEN_DIR]
WAN22_CHECKOUT is a checkout of Wan-Video/Wan2.2 at WAN22_COMMIT (make_wan22_keyframes.py's); its module files are
imported unmodified, nothing of them copied. GOLDEN_DIR (default OUT_DIR) holds wan22_ti2v_tiny.safetensors and
wan22_vae_tiny.safetensors. The helpers (CPU attention, imports, the deterministic writer, the image rule) are
make_wan22_keyframes.py's.
"""
import importlib
import json
import sys
from pathlib import Path

import torch
from safetensors import safe_open
from safetensors.torch import load_file

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_wan22_keyframes as common  # noqa: E402

RUN = dict(frame_num=9, size=[64, 64], max_area=4096, shift=3.0, sample_solver='unipc', sampling_steps=3,
           guide_scale=2.5, num_train_timesteps=1000, seed=77, input_seed=78)


def tiny_ti2v_vae(vae2_2, golden: Path):
    """Wan2_2_VAE with §9.2's weights: _video_vae builds WanVAE_ with the file's config on CPU and loads the state
    dict strictly; the wrapper's __init__ (its latent mean and std) runs unchanged."""
    with safe_open(str(golden / 'wan22_vae_tiny.safetensors'), 'pt') as weights:
        cfg = json.loads(weights.metadata()['config'])
    official = vae2_2._video_vae

    def builder(pretrained_path=None, z_dim=None, dim=None, device='cpu', **kwargs):
        model = vae2_2.WanVAE_(**cfg)
        model.load_state_dict(load_file(str(golden / 'wan22_vae_tiny.safetensors')), strict=True)
        return model

    vae2_2._video_vae = builder
    vae = vae2_2.Wan2_2_VAE(z_dim=cfg['z_dim'], c_dim=cfg['dim'], vae_pth=None, dtype=torch.float32, device='cpu')
    vae2_2._video_vae = official
    return vae, cfg


class TextStandIn:
    """The T5 encoder's place: `context` for "prompt", `context_null` for "negative" (T5 is not run)."""

    class Model:

        def to(self, *args):
            return self

        def cpu(self):
            return self

    def __init__(self, context, context_null):
        self.model = TextStandIn.Model()
        self.context, self.context_null = context, context_null

    def __call__(self, texts, device):
        assert texts in (['prompt'], ['negative']), texts
        return [self.context if texts == ['prompt'] else self.context_null]


def main():
    checkout, out = Path(sys.argv[1]), Path(sys.argv[2])
    golden = Path(sys.argv[3]) if len(sys.argv) > 3 else out
    torch.set_num_threads(1)
    model_module, _, _ = common.import_official(checkout)
    vae2_2 = importlib.import_module('wan.modules.vae2_2')
    ti2v = importlib.import_module('wan.textimage2video')

    dit, dit_config = common.tiny_expert(model_module, golden, 'wan22_ti2v_tiny.safetensors')
    vae, vae_config = tiny_ti2v_vae(vae2_2, golden)

    g = torch.Generator().manual_seed(RUN['input_seed'])
    img = common.picture(g, RUN['size'][1], RUN['size'][0])
    context = torch.randn(9, dit_config['text_dim'], generator=g)
    context_null = torch.randn(12, dit_config['text_dim'], generator=g)

    pipeline = object.__new__(ti2v.WanTI2V)  # its __init__ loads checkpoints: §9.3's attributes instead
    pipeline.__dict__.update(dict(device=torch.device('cpu'), rank=0, t5_cpu=False, init_on_cpu=False,
                                  num_train_timesteps=RUN['num_train_timesteps'], param_dtype=torch.bfloat16,
                                  vae_stride=(4, 16, 16), patch_size=(1, 2, 2), sp_size=1,
                                  sample_neg_prompt='negative', vae=vae,
                                  text_encoder=TextStandIn(context, context_null)))
    pipeline.model = pipeline._configure_model(model=dit, use_sp=False, dit_fsdp=False, shard_fn=None,
                                               convert_model_dtype=False)

    record = {}
    calls = []
    official_forward = pipeline.model.forward

    def forward(x, t, context, seq_len, **kwargs):
        result = official_forward(x, t=t, context=context, seq_len=seq_len, **kwargs)
        calls.append((x[0].clone(), t.clone(), result[0].clone()))
        return result

    pipeline.model.forward = forward
    official_encode, official_decode = vae.encode, vae.decode

    def encode(videos):
        record['image'] = videos[0].clone()
        result = official_encode(videos)
        record['z'] = result[0].clone()
        return result

    def decode(zs):
        record['x0'] = zs[0].clone()
        return official_decode(zs)

    vae.encode, vae.decode = encode, decode
    steps_out = []

    class RecordingUniPC(ti2v.FlowUniPCMultistepScheduler):

        def set_timesteps(self, *args, **kwargs):
            result = super().set_timesteps(*args, **kwargs)
            record['timesteps'] = self.timesteps.clone().to(torch.int64)
            record['sigmas'] = self.sigmas.clone().float()
            return result

        def step(self, *args, **kwargs):
            result = super().step(*args, **kwargs)
            steps_out.append(result[0][0].clone())
            return result

    ti2v.FlowUniPCMultistepScheduler = RecordingUniPC
    video = pipeline.generate(input_prompt='prompt', img=img, max_area=RUN['max_area'], frame_num=RUN['frame_num'],
                              shift=RUN['shift'], sample_solver=RUN['sample_solver'],
                              sampling_steps=RUN['sampling_steps'], guide_scale=RUN['guide_scale'],
                              n_prompt='negative', seed=RUN['seed'], offload_model=False)

    z = record['z']
    noise = torch.randn(z.size(0), (RUN['frame_num'] - 1) // 4 + 1, z.size(2), z.size(3),
                        generator=torch.Generator().manual_seed(RUN['seed']))
    _, mask2 = ti2v.masks_like([noise], zero=True)
    latent_init = (1. - mask2[0]) * z + mask2[0] * noise
    assert torch.equal(calls[0][0], latent_init), 'the step-0 input is not the regenerated noise'
    tensors = {'image': record['image'], 'z': z, 'noise': noise, 'latent_init': latent_init,
               'timesteps': record['timesteps'], 'sigmas': record['sigmas'], 'context': context,
               'context_null': context_null, 'x0': record['x0'], 'video': video,
               'seq_len': torch.tensor([calls[0][1].size(1)], dtype=torch.int64)}
    for k in range(RUN['sampling_steps']):
        cond, uncond = calls[2 * k], calls[2 * k + 1]
        assert torch.equal(cond[1], uncond[1])
        tensors[f'step{k}.t'] = cond[1].float()
        tensors[f'step{k}.noise_pred_cond'] = cond[2]
        tensors[f'step{k}.noise_pred_uncond'] = uncond[2]
        tensors[f'step{k}.scheduler_out'] = steps_out[k]
        tensors[f'step{k}.latent'] = (1. - mask2[0]) * z + mask2[0] * steps_out[k]
    assert torch.equal(tensors[f'step{RUN["sampling_steps"] - 1}.latent'], record['x0'])

    config = dict(RUN, dit=dit_config, vae={k: vae_config[k] for k in ('dim', 'dec_dim', 'z_dim')})
    common.save(tensors, out / 'wan22_ti2v_loop2_io.safetensors', {
        'source': f'Wan-Video/Wan2.2@{common.WAN22_COMMIT} wan/textimage2video.py (WanTI2V.generate -> i2v), '
                  'wan/modules/model.py, wan/modules/vae2_2.py, wan/utils/fm_solvers_unipc.py, wan/utils/utils.py',
        'attention': 'flash_attention replaced by exact fp32 softmax(QK^T/sqrt(D)) V with key-padding mask from k_lens',
        'calls': 'WanTI2V.generate(input_prompt="prompt", img=<PIL image>, max_area, frame_num, shift, '
                 'sample_solver, sampling_steps, guide_scale, n_prompt="negative", seed, offload_model=False) -> '
                 'i2v(), with the run of "config"; the object made with object.__new__ as §9.3 says; the tensors '
                 'named as in wan22_ti2v_loop_io.safetensors (§9.3)',
        'inputs': 'g=torch.Generator().manual_seed(input_seed): the image (§9.3 rule), then context=randn(9,48), '
                  'context_null=randn(12,48)',
        'config': config,
    })


if __name__ == '__main__':
    main()
