"""One pipeline stage of a Llama-style decoder: blocks [start, end) of the model, the token embedding on the first
stage, the final norm and the head on the last. The math is Hugging Face's LlamaForCausalLM (RMSNorm, rotary
embeddings with rotate_half, grouped-query attention, SwiGLU MLP), batch 1, with a KV cache per block.
"""

import math

import torch
import torch.nn.functional as F


class Config:
    """The fields of config.json a Llama-style stage needs; a missing one is an error naming it."""

    def __init__(self, raw):
        def need(key):
            if key not in raw:
                raise ValueError(f"config.json: no {key}")
            return raw[key]

        self.hidden = int(need("hidden_size"))
        self.intermediate = int(need("intermediate_size"))
        self.heads = int(need("num_attention_heads"))
        self.kv_heads = int(raw.get("num_key_value_heads", self.heads))
        self.layers = int(need("num_hidden_layers"))
        self.vocab = int(need("vocab_size"))
        self.eps = float(need("rms_norm_eps"))
        self.rope_theta = float(raw.get("rope_theta", 10000.0))
        self.head_dim = int(raw.get("head_dim") or self.hidden // self.heads)
        self.tied = bool(raw.get("tie_word_embeddings", False))
        if self.heads % self.kv_heads:
            raise ValueError(f"config.json: {self.heads} attention heads do not group into {self.kv_heads} kv heads")


def rms_norm(x, weight, eps):
    """HF LlamaRMSNorm: normalise in float32, cast back, then scale."""
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return weight * xf.to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Rotary:
    """cos/sin of the rotary embedding per position (float32), cast to the compute dtype."""

    def __init__(self, head_dim, theta, dtype):
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
        self.dtype = dtype

    def __call__(self, positions):
        freqs = torch.outer(positions.float(), self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(self.dtype), emb.sin().to(self.dtype)


class Block:
    """One decoder block with its KV cache ([capacity, kv heads, head dim] per block, filled up to `length`)."""

    def __init__(self, cfg, w, dtype, capacity):
        self.cfg = cfg
        self.w = w
        self.k = torch.zeros(capacity, cfg.kv_heads, cfg.head_dim, dtype=dtype)
        self.v = torch.zeros(capacity, cfg.kv_heads, cfg.head_dim, dtype=dtype)
        self.length = 0

    def __call__(self, x, cos, sin):
        cfg, w = self.cfg, self.w
        t = x.shape[0]
        h = rms_norm(x, w["input_layernorm"], cfg.eps)
        q = F.linear(h, w["q_proj"]).view(t, cfg.heads, cfg.head_dim)
        k = F.linear(h, w["k_proj"]).view(t, cfg.kv_heads, cfg.head_dim)
        v = F.linear(h, w["v_proj"]).view(t, cfg.kv_heads, cfg.head_dim)
        c, s = cos[:, None, :], sin[:, None, :]
        q = q * c + rotate_half(q) * s
        k = k * c + rotate_half(k) * s
        start, end = self.length, self.length + t
        if end > self.k.shape[0]:
            raise RuntimeError(f"KV cache full: {end} positions, room for {self.k.shape[0]}")
        self.k[start:end], self.v[start:end] = k, v
        self.length = end
        group = cfg.heads // cfg.kv_heads
        keys = self.k[:end].repeat_interleave(group, dim=1).transpose(0, 1)  # [heads, end, dim]
        values = self.v[:end].repeat_interleave(group, dim=1).transpose(0, 1)
        scores = torch.matmul(q.transpose(0, 1), keys.transpose(1, 2)).float() / math.sqrt(cfg.head_dim)
        # causal: query i (position start + i) sees keys at positions ≤ start + i
        mask = torch.arange(end)[None, :] > (torch.arange(t)[:, None] + start)
        scores = scores.masked_fill(mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1).to(x.dtype)
        attn = torch.matmul(probs, values).transpose(0, 1).reshape(t, cfg.heads * cfg.head_dim)
        x = x + F.linear(attn, w["o_proj"])
        h = rms_norm(x, w["post_attention_layernorm"], cfg.eps)
        return x + F.linear(F.silu(F.linear(h, w["gate_proj"])) * F.linear(h, w["up_proj"]), w["down_proj"])


BLOCK_TENSORS = {
    "input_layernorm": "input_layernorm.weight",
    "post_attention_layernorm": "post_attention_layernorm.weight",
    "q_proj": "self_attn.q_proj.weight",
    "k_proj": "self_attn.k_proj.weight",
    "v_proj": "self_attn.v_proj.weight",
    "o_proj": "self_attn.o_proj.weight",
    "gate_proj": "mlp.gate_proj.weight",
    "up_proj": "mlp.up_proj.weight",
    "down_proj": "mlp.down_proj.weight",
}


class Stage:
    """Blocks [start, end) of the model in `model_dir` (a ModelDir), with the embedding when start is 0 and the
    final norm and head when end is the layer count. `forward` takes token ids on the first stage, hidden states
    ([tokens, hidden]) on the others; it returns hidden states, or the logits ([tokens, vocab], float32) on the last.
    """

    def __init__(self, model_dir, start, end, dtype=torch.bfloat16, capacity=4096):
        cfg = Config(model_dir.config)
        if not 0 <= start < end <= cfg.layers:
            raise ValueError(f"layers {start}:{end} are not a range of the model's {cfg.layers}")
        self.cfg, self.start, self.end, self.dtype = cfg, start, end, dtype
        self.first, self.last = start == 0, end == cfg.layers

        def load(name):
            return model_dir.load(name).to(dtype)

        self.embed = load("model.embed_tokens.weight") if self.first or (self.last and cfg.tied) else None
        self.blocks = [
            Block(cfg, {k: load(f"model.layers.{i}.{v}") for k, v in BLOCK_TENSORS.items()}, dtype, capacity)
            for i in range(start, end)
        ]
        if self.last:
            self.norm = load("model.norm.weight")
            self.head = self.embed if cfg.tied and not model_dir.has("lm_head.weight") else load("lm_head.weight")
        self.rotary = Rotary(cfg.head_dim, cfg.rope_theta, dtype)
        self.position = 0

    def reset(self):
        """Empties the KV caches: the next forward starts a new sequence at position 0."""
        self.position = 0
        for block in self.blocks:
            block.length = 0

    def weight_bytes(self):
        tensors = [t for b in self.blocks for t in b.w.values()]
        tensors += [t for t in (self.embed, getattr(self, "norm", None), getattr(self, "head", None)) if t is not None]
        return sum(t.numel() * t.element_size() for t in {id(t): t for t in tensors}.values())

    @torch.no_grad()
    def forward(self, x):
        t = x.shape[0]
        cos, sin = self.rotary(torch.arange(self.position, self.position + t))
        self.position += t
        if self.first:
            x = F.embedding(x, self.embed)
        for block in self.blocks:
            x = block(x, cos, sin)
        if not self.last:
            return x
        return F.linear(rms_norm(x, self.norm, self.cfg.eps), self.head).float()


def even_split(layers, world):
    """[start, end) of each of `world` ranks: contiguous, the first ranks one layer more when it does not divide."""
    if world > layers:
        raise ValueError(f"{world} ranks for {layers} layers: every stage needs a layer")
    base, extra = divmod(layers, world)
    out, at = [], 0
    for r in range(world):
        n = base + (1 if r < extra else 0)
        out.append((at, at + n))
        at += n
    return out
