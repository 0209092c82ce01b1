"""One rank of torch Gloo's all_reduce, timed the way torus's ring benchmark times its own ranks (nccl-tests).

Launched once per lab namespace by src/ring/bench/gloo.ts with MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE and
GLOO_SOCKET_IFNAME set (torch.distributed's env:// rendezvous). argv[1] = JSON {"sizes": [bytes...], "warmup": W,
"iters": N}. Per size: float32 tensor, W untimed all_reduce(sum), a barrier, N timed back-to-back all_reduce;
prints one JSON line per size {"type": "row", "bytes", "meanUs", "medianUs", "p99Us"} and {"type": "done"} at the
end ({"type": "error", "message"} on failure, exit code 1).
"""
import json
import math
import sys
import time


def main() -> int:
    cfg = json.loads(sys.argv[1])
    try:
        import torch
        import torch.distributed as dist
    except ImportError as e:  # the orchestrator checks first; this is the message if it raced an uninstall
        print(json.dumps({"type": "error", "message": f"python3-torch missing: {e}"}), flush=True)
        return 1
    dist.init_process_group("gloo", init_method="env://", timeout=__import__("datetime").timedelta(seconds=120))
    print(json.dumps({"type": "ready", "torch": torch.__version__}), flush=True)
    for size in cfg["sizes"]:
        count = max(1, size // 4)
        t = torch.ones(count, dtype=torch.float32)
        for _ in range(cfg["warmup"]):
            dist.all_reduce(t)
        dist.barrier()
        times = []
        start = time.perf_counter()
        for _ in range(cfg["iters"]):
            t0 = time.perf_counter()
            dist.all_reduce(t)
            times.append((time.perf_counter() - t0) * 1e6)
        mean = (time.perf_counter() - start) * 1e6 / cfg["iters"]
        times.sort()
        p99 = times[min(len(times) - 1, max(0, math.ceil(0.99 * len(times)) - 1))]
        print(json.dumps({"type": "row", "bytes": count * 4, "meanUs": mean, "medianUs": times[len(times) // 2], "p99Us": p99}), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    print(json.dumps({"type": "done"}), flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 - report any failure as one line for the orchestrator
        print(json.dumps({"type": "error", "message": f"{type(e).__name__}: {e}"}), flush=True)
        sys.exit(1)
