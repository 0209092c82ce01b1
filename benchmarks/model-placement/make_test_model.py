"""Writes a small Llama-style model whose forward pass is sensitive to every part of it, for check_split.py: weights
drawn as an initialised network's (std 1/sqrt(fan in); queries and keys 4x that, so attention is peaked and the
rotary positions matter; norms near 1), BF16, in two safetensors files with the index (the Hugging Face layout).

  python3 make_test_model.py OUT [--layers 5] [--hidden 128] [--heads 4] [--kv-heads 2] [--vocab 512] [--tied]
"""

import argparse
import json
import os
import struct

import torch


def write_safetensors(path, tensors):
    header, blobs, at = {"__metadata__": {"format": "pt"}}, [], 0
    for name, t in tensors.items():
        data = t.to(torch.bfloat16).contiguous().view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": "BF16", "shape": list(t.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    raw = json.dumps(header).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--layers", type=int, default=5)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--tied", action="store_true", help="no lm_head: the head is the embedding matrix")
    a = p.parse_args()
    g = torch.Generator().manual_seed(1)
    hd, inter = a.hidden // a.heads, a.hidden * 8 // 3 // 16 * 16

    def w(rows, cols, gain=1.0):
        return torch.randn(rows, cols, generator=g) * gain / cols**0.5

    def gamma():
        return 1 + 0.1 * torch.randn(a.hidden, generator=g)

    tensors = {"model.embed_tokens.weight": torch.randn(a.vocab, a.hidden, generator=g)}
    for i in range(a.layers):
        pre = f"model.layers.{i}."
        tensors.update(
            {
                pre + "input_layernorm.weight": gamma(),
                pre + "self_attn.q_proj.weight": w(a.hidden, a.hidden, 4),
                pre + "self_attn.k_proj.weight": w(a.kv_heads * hd, a.hidden, 4),
                pre + "self_attn.v_proj.weight": w(a.kv_heads * hd, a.hidden),
                pre + "self_attn.o_proj.weight": w(a.hidden, a.hidden),
                pre + "post_attention_layernorm.weight": gamma(),
                pre + "mlp.gate_proj.weight": w(inter, a.hidden),
                pre + "mlp.up_proj.weight": w(inter, a.hidden),
                pre + "mlp.down_proj.weight": w(a.hidden, inter),
            }
        )
    tensors["model.norm.weight"] = gamma()
    if not a.tied:
        tensors["lm_head.weight"] = w(a.vocab, a.hidden, 4)
    os.makedirs(a.out, exist_ok=True)
    names = list(tensors)
    half = len(names) // 2
    files = {"model-00001-of-00002.safetensors": names[:half], "model-00002-of-00002.safetensors": names[half:]}
    weight_map = {}
    for file, chosen in files.items():
        write_safetensors(os.path.join(a.out, file), {n: tensors[n] for n in chosen})
        weight_map.update({n: file for n in chosen})
    with open(os.path.join(a.out, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": a.hidden,
        "intermediate_size": inter,
        "num_hidden_layers": a.layers,
        "num_attention_heads": a.heads,
        "num_key_value_heads": a.kv_heads,
        "vocab_size": a.vocab,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "tie_word_embeddings": a.tied,
        "torch_dtype": "bfloat16",
    }
    with open(os.path.join(a.out, "config.json"), "w") as f:
        json.dump(config, f, indent=2)


if __name__ == "__main__":
    main()
