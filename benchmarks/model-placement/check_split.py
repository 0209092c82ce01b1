"""Checks on one process that the pipeline's stages compute the model: the logits of a prefill and greedy decode
steps through the unsplit model (one stage) and through the model split into stages (as pipeline_job.py runs them,
each stage loading only its own tensors), against a plain reference written apart from them (float64, no KV cache:
every step recomputes the whole sequence; its own BF16 decoding). Prints one JSON object:

  scale            largest |logit| of the reference
  errors           {stages: max |logits - reference| / scale} (stage counts given by --splits, 1 = unsplit)
  splitVsUnsplit   {stages: max |logits - unsplit logits| / scale}
  controls         the same error for two wrong references (decode steps that do not see the cache; decode tokens
                   whose rotary position does not advance), to show a mistake would be far above the tolerance
  tokens           the greedy tokens of the unsplit run; tokensAgree: every split and the reference chose them too
  finite           no NaN or infinity in any logits

  python3 check_split.py --model DIR [--splits 1,2,3] [--stage-dirs D0,D1,D2] [--dtype float32]

--stage-dirs: one directory per stage (torus shard directories), each stage taking the layers it holds.
"""

import argparse
import json
import math
import os
import struct
import sys

import torch

sys.dont_write_bytecode = True  # the scripts may sit in a read-only artifact directory
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_stage import Config, Stage, even_split  # noqa: E402
from safetensors_dir import ModelDir  # noqa: E402


def run_stages(stages, prompt, forced):
    """Logits [positions, vocab] of a prefill of `prompt`, then one decode step per token of `forced`."""
    out = []
    for x in [prompt] + [torch.tensor([t]) for t in forced]:
        for s in stages:
            x = s.forward(x)
        out.append(x)
    return torch.cat(out).double()


# --- the reference: independent of llama_stage.py and safetensors_dir.py ----------------------------------------


def ref_tensors(path):
    """Every tensor of a model directory as float64, decoded from the raw bytes (BF16: the high half of an f32)."""
    index = os.path.join(path, "model.safetensors.index.json")
    files = sorted(set(json.load(open(index))["weight_map"].values())) if os.path.exists(index) else ["model.safetensors"]
    out = {}
    for name in files:
        raw = open(os.path.join(path, name), "rb").read()
        (n,) = struct.unpack("<Q", raw[:8])
        for key, e in json.loads(raw[8 : 8 + n]).items():
            if key == "__metadata__":
                continue
            a, b = e["data_offsets"]
            data = raw[8 + n + a : 8 + n + b]
            if e["dtype"] == "BF16":
                halves = struct.unpack(f"<{len(data) // 2}H", data)
                values = struct.unpack(f"<{len(halves)}f", struct.pack(f"<{len(halves)}I", *(h << 16 for h in halves)))
            elif e["dtype"] == "F32":
                values = struct.unpack(f"<{len(data) // 4}f", data)
            else:
                raise ValueError(f"reference: dtype {e['dtype']}")
            out[key] = torch.tensor(values, dtype=torch.float64).reshape(e["shape"])
    return out


def ref_logits(w, c, tokens, positions=None):
    """Logits of every position of `tokens` (at `positions`, default 0, 1, …), the whole sequence at once (float64)."""
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    nh, nkv, eps = c["num_attention_heads"], c.get("num_key_value_heads", c["num_attention_heads"]), c["rms_norm_eps"]
    t = len(tokens)

    def norm(x, g):
        return g * (x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps))

    pos = torch.arange(t, dtype=torch.float64) if positions is None else torch.tensor(positions, dtype=torch.float64)
    ang = pos[:, None] * (c.get("rope_theta", 10000.0) ** (-torch.arange(0, hd, 2, dtype=torch.float64) / hd))[None, :]
    cos, sin = torch.cos(ang), torch.sin(ang)  # [t, hd/2]

    def rope(x):  # x [t, heads, hd]; pairs (i, i + hd/2) rotate by the angle of i
        a, b = x[..., : hd // 2], x[..., hd // 2 :]
        co, si = cos[:, None, :], sin[:, None, :]
        return torch.cat((a * co - b * si, b * co + a * si), dim=-1)

    x = w["model.embed_tokens.weight"][torch.tensor(tokens)]
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = norm(x, w[p + "input_layernorm.weight"])
        q = rope((h @ w[p + "self_attn.q_proj.weight"].T).reshape(t, nh, hd))
        k = rope((h @ w[p + "self_attn.k_proj.weight"].T).reshape(t, nkv, hd))
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(t, nkv, hd)
        heads = []
        for j in range(nh):
            kj, vj = k[:, j // (nh // nkv)], v[:, j // (nh // nkv)]
            s = (q[:, j] @ kj.T) / math.sqrt(hd)
            s = s.masked_fill(torch.triu(torch.ones(t, t, dtype=torch.bool), 1), -math.inf)
            heads.append(torch.softmax(s, -1) @ vj)
        x = x + torch.cat(heads, -1) @ w[p + "self_attn.o_proj.weight"].T
        h = norm(x, w[p + "post_attention_layernorm.weight"])
        gate = h @ w[p + "mlp.gate_proj.weight"].T
        x = x + ((gate / (1 + torch.exp(-gate))) * (h @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return norm(x, w["model.norm.weight"]) @ head.T


def ref_run(w, c, prompt, forced, cache=True, advance=True):
    """Reference logits in the pipeline's layout: the prompt's positions, then each decode step's last position.
    Wrong on purpose (the controls): `cache=False`, a decode step sees only its token; `advance=False`, every decode
    token sits at the first decode position."""
    rows = [ref_logits(w, c, prompt)]
    for i in range(len(forced)):
        seq = prompt + forced[: i + 1] if cache else forced[i : i + 1]
        positions = None if advance else list(range(len(prompt))) + [len(prompt)] * (i + 1)
        rows.append(ref_logits(w, c, seq, positions)[-1:])
    return torch.cat(rows)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True, help="the whole model directory")
    p.add_argument("--stage-dirs", help="comma-separated shard directories, one per stage, in order")
    p.add_argument("--splits", default="1,2,3", help="stage counts to check (even splits of the layers)")
    p.add_argument("--dtype", choices=["bfloat16", "float32"], default="float32")
    p.add_argument("--prompt-tokens", type=int, default=12)
    p.add_argument("--decode-steps", type=int, default=6)
    a = p.parse_args()
    torch.set_num_threads(1)
    dtype = torch.bfloat16 if a.dtype == "bfloat16" else torch.float32
    whole = ModelDir(a.model)
    cfg = Config(whole.config)
    cap = a.prompt_tokens + a.decode_steps
    prompt = torch.randint(cfg.vocab, (a.prompt_tokens,), generator=torch.Generator().manual_seed(7))

    def greedy(stages):
        tokens, x = [], prompt
        for _ in range(a.decode_steps + 1):
            for s in stages:
                x = s.forward(x)
            tokens.append(int(x[-1].argmax()))
            x = torch.tensor(tokens[-1:])
        return tokens[:-1]

    forced = greedy([Stage(whole, 0, cfg.layers, dtype, cap)])
    runs = {}
    for k in [int(s) for s in a.splits.split(",")]:
        runs[str(k)] = run_stages([Stage(whole, s, e, dtype, cap) for s, e in even_split(cfg.layers, k)], prompt, forced)
    if a.stage_dirs:
        dirs = [ModelDir(d) for d in a.stage_dirs.split(",")]
        ranges = [(d.layers()[0], d.layers()[-1] + 1) for d in dirs]
        stages = [Stage(d, s, e, dtype, cap) for d, (s, e) in zip(dirs, ranges)]
        runs["dirs"] = run_stages(stages, prompt, forced)

    w, c = ref_tensors(a.model), whole.config
    ids = prompt.tolist()
    ref = ref_run(w, c, ids, forced)
    scale = float(ref.abs().max())
    unsplit = runs.get("1", runs[next(iter(runs))])

    def err(x, y):
        e = float((x - y).abs().max()) / scale
        return e if math.isfinite(e) else str(e)  # "nan" / "inf": never a number a tolerance admits

    def chosen(logits):
        return logits[a.prompt_tokens - 1 :].argmax(-1).tolist()[: len(forced)]

    print(
        json.dumps(
            {
                "layers": cfg.layers,
                "stageLayers": {k: even_split(cfg.layers, int(k)) for k in runs if k.isdigit()},
                "scale": scale if math.isfinite(scale) else str(scale),
                "errors": {k: err(v, ref) for k, v in runs.items()},
                "splitVsUnsplit": {k: err(v, unsplit) for k, v in runs.items()},
                "controls": {
                    "positionNotAdvanced": err(ref_run(w, c, ids, forced, advance=False), ref),
                    "noCache": err(ref_run(w, c, ids, forced, cache=False), ref),
                },
                "tokens": forced,
                "tokensAgree": all(chosen(v) == forced for v in runs.values()) and chosen(ref) == forced,
                "finite": all(bool(torch.isfinite(v).all()) for v in runs.values()),
            },
            allow_nan=False,
        )
    )


if __name__ == "__main__":
    main()
