"""A pipeline-parallel Llama-style decoder over torch.distributed (Gloo), one stage per rank (docs/runners.md,
"A real pipeline job").

Each rank builds the blocks of its layer range from its model directory, then runs a prefill of --prompt-tokens
tokens and --decode-steps batch-1 decode steps: the first stage embeds the tokens, every stage sends its output
(hidden states) to the next rank, the last stage computes the logits and sends the greedy next token back to rank 0.
Every step prints one JSON line per rank; the last rank's line carries the whole step time. The same command runs
under `torus run` (the placement in the environment) and under torchrun (RANK, WORLD_SIZE, MASTER_ADDR/PORT).

Model directory: TORUS_MODEL_DIR (a stage's shard, or the whole model), else --model DIR.
Layer range: --layers A:B; else the layers a shard directory holds; else TORUS_LAYER_START/TORUS_LAYER_END (the
torus plan); else an even split of the model's layers by rank. All ranks check that the ranges tile the model.
"""

import argparse
import datetime
import json
import os
import socket
import struct
import sys
import time
import traceback

import torch
import torch.distributed as dist

sys.dont_write_bytecode = True  # the scripts may sit in a read-only artifact directory
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama_stage import Config, Stage, even_split  # noqa: E402
from safetensors_dir import ModelDir  # noqa: E402

DTYPES = {"bfloat16": torch.bfloat16, "float32": torch.float32}


class JobError(Exception):
    """A mistake in the job's inputs (model, layer ranges): exit 2 with this message."""


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=os.environ.get("TORUS_PIPELINE_MODEL"), help="whole model directory")
    p.add_argument("--layers", help="this rank's layers A:B (end exclusive)")
    p.add_argument("--prompt-tokens", type=int, default=32, help="tokens of the prefill (default 32)")
    p.add_argument("--decode-steps", type=int, default=16, help="batch-1 decode steps after it (default 16)")
    p.add_argument(
        "--prefills", type=int, default=1, help="prefills of the prompt, each a new sequence, before decoding (default 1)"
    )
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bfloat16")
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank (default 1)")
    p.add_argument("--seed", type=int, default=0, help="seed of the prompt's token ids")
    p.add_argument("--timeout", type=float, default=300, help="seconds a rank waits on its peers")
    p.add_argument("--fail-rank", type=int, help="this rank exits 3 on purpose (tests) ...")
    p.add_argument("--fail-after", type=int, default=0, help="... after this many steps")
    p.add_argument(
        "--peer-grace", type=float, default=3, help="seconds a rank that lost a peer waits before it exits 1 (default 3)"
    )
    a = p.parse_args(argv)
    if a.prompt_tokens < 1 or a.decode_steps < 0 or a.threads < 1 or a.prefills < 1:
        p.error("--prompt-tokens, --prefills and --threads need at least 1, --decode-steps at least 0")
    return a


def env_int(name):
    v = os.environ.get(name)
    if v is None:
        return None
    if not v.isdigit():
        raise JobError(f"{name}={v!r}: expected a whole number")
    return int(v)


def model_dir_of(args):
    """(ModelDir, whether it is a stage's shard: some but not all of the model's layers)."""
    path = os.environ.get("TORUS_MODEL_DIR") or args.model
    if not path:
        raise JobError("no model: set TORUS_MODEL_DIR or give --model DIR")
    try:
        md = ModelDir(path)
        layers = Config(md.config).layers
    except (OSError, ValueError, KeyError) as e:
        raise JobError(f"model directory {path}: {e}") from e
    present = md.layers()
    return md, bool(os.environ.get("TORUS_MODEL_DIR")) and present != list(range(layers))


def own_range(args, md, shard, rank, world):
    """This rank's [start, end) and where it came from."""
    layers = Config(md.config).layers
    if args.layers:
        try:
            a, b = (int(x) for x in args.layers.split(":"))
        except ValueError:
            raise JobError(f"--layers {args.layers}: expected A:B") from None
        return (a, b), "--layers"
    planned = env_int("TORUS_LAYER_START"), env_int("TORUS_LAYER_END")
    if shard:
        present = md.layers()
        if not present or present != list(range(present[0], present[-1] + 1)):
            raise JobError(f"TORUS_MODEL_DIR holds layers {present}: not one contiguous range")
        held = (present[0], present[-1] + 1)
        if None not in planned and planned != held:
            raise JobError(f"TORUS_MODEL_DIR holds layers {held[0]}:{held[1]}, the plan says {planned[0]}:{planned[1]}")
        return held, "TORUS_MODEL_DIR"
    if None not in planned:
        return planned, "TORUS_LAYER_START/END"
    return even_split(layers, world)[rank], "even split"


def check_tiling(ranges, layers, source):
    """Every rank's range, in rank order, must cover [0, layers) with no gap or overlap."""
    at = 0
    for r, (a, b) in enumerate(ranges):
        if a != at or b <= a:
            break
        at = b
    else:
        if at == layers:
            return
    shown = ", ".join(f"rank {r} {a}:{b}" for r, (a, b) in enumerate(ranges))
    hint = " (under torus run, give --layers with the model's layer count)" if source.startswith("TORUS_LAYER") else ""
    raise JobError(f"the stages' layers ({shown}, from {source}) do not split the model's {layers} layers{hint}")


def tcp_links(master_port):
    """This process's TCP connections (Gloo's pairs, the store): addresses and bytes, from the kernel (TCP_INFO)."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{fd}").startswith("socket:"):
                continue
            s = socket.socket(fileno=os.dup(int(fd)))
        except OSError:
            continue
        try:
            if s.type != socket.SOCK_STREAM or s.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            try:
                local, remote = s.getsockname()[:2], s.getpeername()[:2]
            except OSError:
                continue  # a listening socket
            info = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
            # struct tcp_info: tcpi_bytes_acked at byte 120, tcpi_bytes_received at 128 (Linux 4.1+)
            acked, received = struct.unpack_from("<QQ", info, 120) if len(info) >= 136 else (None, None)
            store = master_port in (local[1], remote[1])
            out.append(
                {"local": f"{plain(local[0])}:{local[1]}", "remote": f"{plain(remote[0])}:{remote[1]}", "sent": acked,
                 "received": received, "store": store}
            )
        finally:
            s.close()
    return out


def plain(ip):
    """An IPv4 address as such, not IPv4-mapped IPv6 (the store listens on both)."""
    return ip[7:] if ip.startswith("::ffff:") else ip


def emit(line):
    print(json.dumps(line), flush=True)


def run(args):
    torch.set_num_threads(args.threads)
    torch.set_num_interop_threads(1)
    rank, world = int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))
    dtype = DTYPES[args.dtype]
    md, shard = model_dir_of(args)
    cfg = Config(md.config)
    (start, end), source = own_range(args, md, shard, rank, world)
    if world > 1:
        dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
        if (dist.get_rank(), dist.get_world_size()) != (rank, world):
            raise JobError("RANK/WORLD_SIZE disagree with the process group")
        mine = torch.tensor([start, end], dtype=torch.int64)
        every = [torch.zeros(2, dtype=torch.int64) for _ in range(world)]
        dist.all_gather(every, mine)
        check_tiling([tuple(int(v) for v in t) for t in every], cfg.layers, source)
    else:
        check_tiling([(start, end)], cfg.layers, source)
    loaded = time.perf_counter()
    try:
        stage = Stage(md, start, end, dtype, capacity=args.prompt_tokens + args.decode_steps)
    except (KeyError, ValueError) as e:  # a tensor the range needs is not in the directory, a shape that does not fit
        raise JobError(f"layers {start}:{end} of {md.path}: {e}") from e
    emit(
        {"event": "stage", "rank": rank, "world": world, "layers": [start, end], "source": source,
         "model": md.path, "weightBytes": stage.weight_bytes(), "loadMs": round((time.perf_counter() - loaded) * 1e3, 3),
         "dtype": args.dtype, "threads": args.threads, "iface": os.environ.get("GLOO_SOCKET_IFNAME"),
         "master": f"{os.environ.get('MASTER_ADDR')}:{os.environ.get('MASTER_PORT')}"}
    )
    prompt = torch.randint(cfg.vocab, (args.prompt_tokens,), generator=torch.Generator().manual_seed(args.seed))
    if world > 1:
        dist.barrier()
    previous_end = time.perf_counter()
    token = None
    steps = args.prefills + args.decode_steps
    for step in range(steps):
        if args.fail_rank == rank and step == args.fail_after:
            print(f"rank {rank}: failing on purpose after {step} steps", file=sys.stderr, flush=True)
            os._exit(3)
        prefill = step < args.prefills
        n = args.prompt_tokens if prefill else 1
        began = time.perf_counter()
        if prefill:
            stage.reset()  # a new sequence: a repeated prefill costs what the first one does, minus the warm-up
        if stage.first:
            if step > 0 and world > 1:
                token = torch.zeros(1, dtype=torch.int64)
                dist.recv(token, world - 1)  # the last stage sends every step's token back
            x = prompt if prefill else token
        else:
            x = torch.empty(n, cfg.hidden, dtype=dtype)
            dist.recv(x, rank - 1)
        received = time.perf_counter()
        y = stage.forward(x)
        computed = time.perf_counter()
        line = {"event": "step", "kind": "prefill" if prefill else "decode", "step": step, "rank": rank,
                "tokens": n}
        if stage.last:
            token = y[-1].argmax().reshape(1)
            if world > 1 and step + 1 < steps:
                dist.send(token, 0)
            line["token"] = int(token)
        else:
            dist.send(y.contiguous(), rank + 1)
        sent = time.perf_counter()
        line.update(computeMs=ms(computed - received), recvWaitMs=ms(received - began), sendMs=ms(sent - computed))
        if stage.last:
            line["stepMs"] = ms(sent - previous_end)
            previous_end = sent
        emit(line)
    if world > 1:
        emit({"event": "links", "rank": rank, "links": tcp_links(int(os.environ.get("MASTER_PORT", "0")))})
        dist.barrier()
        dist.destroy_process_group()


def ms(seconds):
    return round(seconds * 1e3, 3)


def main():
    args = parse_args(sys.argv[1:])
    try:
        run(args)
    except JobError as e:
        print(f"pipeline_job: {e}", file=sys.stderr, flush=True)
        code = 2
    except Exception:  # a peer gone (Gloo's connection closed), a short read: the group must stop
        traceback.print_exc()
        sys.stderr.flush()
        if int(os.environ.get("WORLD_SIZE", "1")) > 1:
            # The rank that failed first is the one to report: its launcher (torus, torchrun) stops the group on
            # that rank's exit, unless this one's exit, caused by it, reaches the launcher first.
            time.sleep(args.peer_grace)
        code = 1
    else:
        code = 0
    sys.stdout.flush()
    sys.stderr.flush()
    # os._exit: an interpreter shutdown with a Gloo group still up can run its C++ destructors while its threads are
    # joinable (SIGABRT instead of the exit code).
    os._exit(code)


if __name__ == "__main__":
    main()
