"""torus calibration for torch (docs/placement.md, "Calibrated figures"): what a Llama-style block costs in torch on
this CPU, and what one pipeline hop costs torch itself, as the four figures the placement planner's calibrated model takes.
Prints exactly one line on stdout:

    {"torusCalibration":1,"framework":"torch","gflops":..,"memoryBandwidthGBps":..,"layerOverheadMs":..,
     "hopOverheadMs":..}

It times stacks of the block pipeline_job.py runs (llama_stage.Block, bf16, random weights) at two sizes, for decode
(1 token over a KV cache of CONTEXT positions) and prefill (PREFILL tokens from an empty cache), and fits per block
    ms = layerOverheadMs + bytes / memoryBandwidth + flops / gflops
(weights and KV cache read once per step; flops of the matmuls and of attention). Two sizes separate the fixed
overhead from the per-byte and per-flop costs; decode and prefill separate bytes from flops. The fit keeps every
term non-negative; a term the timings cannot tell from zero makes the script fail (exit 1, reason on stderr) rather
than print a figure it did not measure.

hopOverheadMs (hop_pingpong.py): two Gloo processes on the loopback pass one token's hidden states (HOP_HIDDEN bf16
values) back and forth with dist.send/recv, one thread each, as the pipeline's stages do; half the median round trip
is what a hop costs beyond its link (the send, the receiver's wake-up). The loopback keeps the link out of it: the
planner prices each link from its own measured RTT and bandwidth.

Usage: python3 calibrate_torch.py [--threads N] [--budget-s S]. Standard library and torch only; ≤ 10 s.
"""

import argparse
import itertools
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

from hop_pingpong import hop_overhead_ms  # noqa: E402
from llama_stage import Block, Config, Rotary  # noqa: E402

CONTEXT = 64  # positions in the KV cache while decoding
PREFILL = 32  # tokens of one prefill step
# (hidden, intermediate, blocks): the small stack is overhead-heavy, the large one byte- and flop-heavy
SIZES = ((256, 688, 8), (1024, 2816, 2))
DTYPE = torch.bfloat16
HOP_HIDDEN = 1024  # the large block's hidden size: a decode hop's activation (2 KiB in bf16)


def make_blocks(hidden, intermediate, count):
    heads = hidden // 64
    cfg = Config(
        {
            "hidden_size": hidden,
            "intermediate_size": intermediate,
            "num_attention_heads": heads,
            "num_key_value_heads": heads,
            "num_hidden_layers": count,
            "vocab_size": 32,
            "rms_norm_eps": 1e-5,
        }
    )
    shapes = {
        "input_layernorm": (hidden,),
        "post_attention_layernorm": (hidden,),
        "q_proj": (hidden, hidden),
        "k_proj": (hidden, hidden),
        "v_proj": (hidden, hidden),
        "o_proj": (hidden, hidden),
        "gate_proj": (intermediate, hidden),
        "up_proj": (intermediate, hidden),
        "down_proj": (hidden, intermediate),
    }
    blocks = []
    for _ in range(count):
        w = {k: (torch.randn(*s) * 0.02).to(DTYPE) for k, s in shapes.items()}
        blocks.append(Block(cfg, w, DTYPE, CONTEXT + PREFILL + 1))
    weight_params = 4 * hidden * hidden + 3 * hidden * intermediate
    return cfg, blocks, weight_params


@torch.no_grad()
def time_step(cfg, blocks, tokens, start, repeats):
    """Median ms of one step of `tokens` tokens through every block, the cache holding `start` positions."""
    rotary = Rotary(cfg.head_dim, cfg.rope_theta, DTYPE)
    cos, sin = rotary(torch.arange(start, start + tokens))
    x0 = torch.randn(tokens, cfg.hidden).to(DTYPE)
    times = []
    for _ in range(repeats + 1):  # the first run warms the allocator and the kernels
        for b in blocks:
            b.length = start
        t0 = time.perf_counter()
        x = x0
        for b in blocks:
            x = b(x, cos, sin)
        times.append((time.perf_counter() - t0) * 1e3)
    times = sorted(times[1:])
    return times[len(times) // 2]


def rows_for(hidden, intermediate, count, repeats):
    cfg, blocks, params = make_blocks(hidden, intermediate, count)
    kv_bytes_per_position = 2 * cfg.kv_heads * cfg.head_dim * 2  # K and V, bf16
    rows = []
    # decode: one token reads every weight and the KV cache of CONTEXT + 1 positions
    ms = time_step(cfg, blocks, 1, CONTEXT, repeats) / count
    bytes_ = 2 * params + kv_bytes_per_position * (CONTEXT + 1)
    flops = 2 * params + 4 * hidden * (CONTEXT + 1)
    rows.append((ms, bytes_, flops))
    # prefill: PREFILL tokens from an empty cache (causal attention: about half the score matrix)
    ms = time_step(cfg, blocks, PREFILL, 0, repeats) / count
    bytes_ = 2 * params + kv_bytes_per_position * PREFILL
    flops = 2 * params * PREFILL + 4 * hidden * PREFILL * (PREFILL + 1) // 2
    rows.append((ms, bytes_, flops))
    return rows


def solve(a, b):
    """Least squares a·x ≈ b by the normal equations (at most 3 unknowns); None when singular."""
    n = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(n)] + [sum(r[i] * y for r, y in zip(a, b))] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-300:
            return None
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def fit(rows):
    """Non-negative fit of ms = c0 + bytes·u + flops·v, each row weighted by 1/ms (relative error)."""
    scale = (1.0, 1e-9, 1e-9)  # unknowns in ms, ms/GB, ms/GFLOP keep the normal equations well scaled
    best = None
    for keep in itertools.product((True, False), repeat=3):
        cols = [i for i in range(3) if keep[i]]
        if not cols:
            continue
        a = [[(1.0, by, fl)[i] * scale[i] / ms for i in cols] for ms, by, fl in rows]
        x = solve(a, [1.0] * len(rows))
        if x is None or any(v < 0 for v in x):
            continue
        coef = [0.0, 0.0, 0.0]
        for i, v in zip(cols, x):
            coef[i] = v * scale[i]
        err = sum((1 - (coef[0] + by * coef[1] + fl * coef[2]) / ms) ** 2 for ms, by, fl in rows)
        if best is None or err < best[0]:
            best = (err, coef)
    return best[1] if best else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    parser.add_argument("--budget-s", type=float, default=6.0, help="seconds of timing to aim for (default 6)")
    args = parser.parse_args()
    started = time.perf_counter()
    # first, before any torch op in this process: the ping-pong's ranks are forked from it
    try:
        hop_ms = hop_overhead_ms(HOP_HIDDEN)
    except RuntimeError as e:
        print(f"calibrate_torch: no hop overhead: {e}", file=sys.stderr)
        return 1
    torch.set_num_threads(max(1, args.threads))
    torch.manual_seed(0)
    # one quick pass sizes the repeats so the timed passes fit the budget
    probe = [r for s in SIZES for r in rows_for(*s, repeats=1)]
    per_repeat_s = sum(ms * s[2] for s, ms in zip([x for x in SIZES for _ in (0, 1)], [r[0] for r in probe])) / 1e3
    left = args.budget_s - (time.perf_counter() - started)
    repeats = int(max(3, min(41, left / max(per_repeat_s, 1e-6))))
    rows = [r for s in SIZES for r in rows_for(*s, repeats=repeats)]
    coef = fit(rows)
    if coef is None or coef[1] <= 0 or coef[2] <= 0:
        print(f"calibrate_torch: timings do not separate bytes from flops: {rows}", file=sys.stderr)
        return 1
    line = {
        "torusCalibration": 1,
        "framework": "torch",
        "gflops": round(1 / coef[2] / 1e6, 3),  # coef[2] is ms per flop
        "memoryBandwidthGBps": round(1 / coef[1] / 1e6, 3),  # coef[1] is ms per byte
        "layerOverheadMs": round(coef[0], 6),
        "hopOverheadMs": round(hop_ms, 6),
    }
    print(
        f"calibrate_torch: hop {hop_ms:.3f} ms, {repeats} repeats, {time.perf_counter() - started:.2f} s, rows (ms, bytes, flops) {rows}",
        file=sys.stderr,
    )
    print(json.dumps(line, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
