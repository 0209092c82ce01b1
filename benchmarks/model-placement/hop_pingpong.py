"""The framework's own cost of one pipeline hop on this node (docs/placement.md, "Calibrated figures"): two Gloo
processes on the loopback pass one token's hidden states (bf16) back and forth, as pipeline_job.py's stages do
(dist.send / dist.recv, one thread each); half the median round trip is one hop, the link aside (the planner prices
a link from its measured RTT and bandwidth). Standard library and torch only."""

import datetime
import multiprocessing
import os
import socket
import time

import torch
import torch.distributed as dist


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rank_main(rank, port, hidden, rounds, out):
    try:
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"
        torch.set_num_threads(1)
        dist.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
            timeout=datetime.timedelta(seconds=30),
        )
        x = torch.zeros(hidden, dtype=torch.bfloat16)
        times = []
        for i in range(rounds + rounds // 5):  # the first fifth warms the pair up
            t0 = time.perf_counter()
            if rank == 0:
                dist.send(x, 1)
                dist.recv(x, 1)
            else:
                dist.recv(x, 0)
                dist.send(x, 0)
            if i >= rounds // 5:
                times.append((time.perf_counter() - t0) * 1e3)
        dist.barrier()
        dist.destroy_process_group()
        if rank == 0:
            times.sort()
            out.send(times[len(times) // 2] / 2)
    except Exception as e:  # noqa: BLE001 - the parent reports it
        if rank == 0:
            out.send(f"{type(e).__name__}: {e}")
    finally:
        out.close()
        os._exit(0)


def hop_overhead_ms(hidden=1024, rounds=200, timeout_s=30.0):
    """Half the median round trip of `hidden` bf16 values between two Gloo processes on the loopback, ms; raises
    RuntimeError when the pair did not measure it."""
    ctx = multiprocessing.get_context("fork")  # no torch op has run yet in the parent: a fork is a clean copy
    port = free_port()
    reader, writer = ctx.Pipe(duplex=False)
    procs = [ctx.Process(target=rank_main, args=(r, port, hidden, rounds, writer)) for r in (0, 1)]
    for p in procs:
        p.start()
    writer.close()
    try:
        if not reader.poll(timeout_s):
            raise RuntimeError(f"the loopback ping-pong gave no figure in {timeout_s} s")
        got = reader.recv()
    except EOFError:
        raise RuntimeError("the loopback ping-pong ended without a figure") from None
    finally:
        for p in procs:
            p.join(5)
            if p.is_alive():
                p.kill()
                p.join()
    if not isinstance(got, float):
        raise RuntimeError(f"the loopback ping-pong failed: {got}")
    return got


if __name__ == "__main__":
    print(hop_overhead_ms())
